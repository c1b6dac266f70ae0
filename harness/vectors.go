package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Vector is one conformance case of testdata/vectors (see
// tools/vectors/gen_vectors.py for the file format).
type Vector struct {
	File     string          `json:"-"`
	Export   string          `json:"-"`
	Name     string          `json:"name"`
	Proves   []string        `json:"proves"`
	Input    json.RawMessage `json:"input"`
	InputRaw *string         `json:"input_raw"`
	Expected json.RawMessage `json:"expected"`
	ExpRaw   *string         `json:"expected_raw"`
	Error    *struct {
		Code  string `json:"code"`
		Field string `json:"field"`
	} `json:"error"`
}

// InputBytes is the exact input to send.
func (v *Vector) InputBytes() []byte {
	if v.InputRaw != nil {
		return []byte(*v.InputRaw)
	}
	return v.Input
}

// LoadVectors reads every vector file in dir, in a stable order.
func LoadVectors(dir string) ([]Vector, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Vector
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var file struct {
			Export  string   `json:"export"`
			Vectors []Vector `json:"vectors"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, v := range file.Vectors {
			v.File, v.Export = filepath.Base(f), file.Export
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no vectors in %s", dir)
	}
	return out, nil
}

// Check compares an export's outcome with the vector's expectation. err
// must be a *CallError for a failure the export reported, or an error
// carrying "<code>: <field>: …" text (as the native api returns).
func (v *Vector) Check(out []byte, err error) error {
	if v.Error != nil {
		if err == nil {
			return fmt.Errorf("expected error %s at %q, got output %s", v.Error.Code, v.Error.Field, clipText(out))
		}
		code, msg := splitErr(err)
		if code != v.Error.Code {
			return fmt.Errorf("expected error code %s, got %q", v.Error.Code, err.Error())
		}
		if v.Error.Field != "" && !strings.HasPrefix(msg, v.Error.Field+": ") {
			return fmt.Errorf("expected the error to name field %q first, got %q", v.Error.Field, msg)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("unexpected error: %w", err)
	}
	if v.ExpRaw != nil {
		if !bytes.Equal(out, []byte(*v.ExpRaw)) {
			return fmt.Errorf("output differs byte-for-byte\n got: %s\nwant: %s", out, *v.ExpRaw)
		}
		return nil
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("output is not JSON: %v: %s", err, clipText(out))
	}
	if err := json.Unmarshal(v.Expected, &want); err != nil {
		return fmt.Errorf("vector's expected is not JSON: %v", err)
	}
	if path, ok := jsonEqual(got, want, "$"); !ok {
		g, _ := json.Marshal(got)
		return fmt.Errorf("output differs at %s\n got: %s\nwant: %s", path, clipText(g), clipText(v.Expected))
	}
	return nil
}

func splitErr(err error) (code, msg string) {
	var ce *wasmhost.CallError
	if errors.As(err, &ce) {
		return ce.Code, ce.Message
	}
	code, msg, _ = strings.Cut(err.Error(), ": ")
	return code, msg
}

func clipText(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// jsonEqual compares decoded JSON, numbers within a relative 1e-9.
func jsonEqual(a, b any, path string) (string, bool) {
	switch bv := b.(type) {
	case float64:
		av, ok := a.(float64)
		if !ok {
			return path, false
		}
		if av == bv || math.Abs(av-bv) <= 1e-9*math.Max(1, math.Abs(bv)) {
			return "", true
		}
		return path, false
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok || len(am) != len(bv) {
			return path, false
		}
		for k, x := range bv {
			y, ok := am[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := jsonEqual(y, x, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		as, ok := a.([]any)
		if !ok || len(as) != len(bv) {
			return path, false
		}
		for i := range bv {
			if p, ok := jsonEqual(as[i], bv[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(a, b)
}
