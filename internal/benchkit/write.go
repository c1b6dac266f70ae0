package benchkit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteOutputs writes a benchmark's results: v as indented JSON to
// jsonPath ("-" for stdout, "" for none) and the Markdown report md to
// mdPath ("" for none), creating directories as needed.
func WriteOutputs(jsonPath string, v any, mdPath, md string) error {
	if jsonPath != "" {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		if jsonPath == "-" {
			if _, err := os.Stdout.Write(b); err != nil {
				return err
			}
		} else if err := WriteFile(jsonPath, b); err != nil {
			return err
		}
	}
	if mdPath != "" {
		return WriteFile(mdPath, []byte(md))
	}
	return nil
}

// WriteFile writes b to path, creating its directory.
func WriteFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Pct prints n of d as "n/d (p%)", "–" when d is 0.
func Pct(n, d int) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, d, 100*float64(n)/float64(d))
}

// Commas prints n with thousands separators (1,234).
func Commas(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
