package harness_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/internal/wasmhost"
	"github.com/stretchr/testify/require"
)

// largeCase is an input of many small elements (messages, batches, batch
// contents), valid or with its last element bad: the inputs whose decoding
// once took minutes under TinyGo.
type largeCase struct {
	name, export string
	n            int       // elements
	parts        [4]string // prefix, element, bad last element ("": none), suffix
	code         string    // "" means the call must succeed
	field        string    // the field its error names, "%d" the last index
	array        string    // the array of elements, as errors name it
}

// input is the case's input, made when needed: at 64 MiB, all of them at
// once would hold a gigabyte.
func (c largeCase) input() []byte {
	return elements(c.parts[0], c.parts[1], c.parts[2], c.n, c.parts[3])
}

// elements writes prefix, n elements (item, or bad for the last one when
// bad is not empty) separated by commas, and suffix.
func elements(prefix, item, bad string, n int, suffix string) []byte {
	var b strings.Builder
	b.Grow(len(prefix) + n*(len(item)+1) + len(suffix))
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i == n-1 && bad != "" {
			b.WriteString(bad)
		} else {
			b.WriteString(item)
		}
	}
	b.WriteString(suffix)
	return []byte(b.String())
}

const (
	tinyMessage = `{"role":"user","content":"hi"}`
	tinyBad     = `{"role":7,"content":"hi"}`
	tinyBatch   = `{"content":"s","depth":0,"start_time":"2026-02-28T10:00:00.000Z","end_time":"2026-02-28T11:00:00.000Z","message_count":1}`
)

// largeCases are the cases with n elements each. At n = 200,000 they are
// the bad-input cases of the performance targets; largeCaseAtLimit fits n to
// the 64 MiB limit.
func largeCases(n int) []largeCase {
	req := func(provider string) string {
		return `{"provider":"` + provider + `","request":{"model":"m","max_tokens":5,"messages":[`
	}
	const bad = "invalid_input"
	return []largeCase{
		{"providerRequest anthropic", "providerRequest", n, [4]string{req("anthropic"), tinyMessage, "", `]}}`}, "", "", "request.messages"},
		{"providerRequest anthropic, last bad", "providerRequest", n, [4]string{req("anthropic"), tinyMessage, tinyBad, `]}}`}, bad, "request.messages[%d].role", "request.messages"},
		{"providerRequest openai, last bad", "providerRequest", n, [4]string{req("openai"), tinyMessage, tinyBad, `]}}`}, bad, "request.messages[%d].role", "request.messages"},
		{"buildClipArchive", "buildClipArchive", n, [4]string{`{"batches":[`, tinyBatch, "", `]}`}, "", "", "batches"},
		{"buildClipArchive, last bad", "buildClipArchive", n, [4]string{`{"batches":[`, tinyBatch, `{"content":7}`, `]}`}, bad, "batches[%d].content", "batches"},
		{"buildResummarizationRequest", "buildResummarizationRequest", n, [4]string{`{"batch_contents":[`, `"s"`, "", `]}`}, "", "", "batch_contents"},
		{"buildResummarizationRequest, last bad", "buildResummarizationRequest", n, [4]string{`{"batch_contents":[`, `"s"`, `7`, `]}`}, bad, "batch_contents[%d]", "batch_contents"},
		{"buildSummarizationRequest", "buildSummarizationRequest", n, [4]string{`{"messages":[`, tinyMessage, "", `]}`}, "", "", "messages"},
		{"split, last bad", "split", n, [4]string{`{"messages":[`, tinyMessage, tinyBad, `]}`}, bad, "messages[%d].role", "messages"},
		{"compress, last bad", "compress", n, [4]string{`{"conversation_id":"c","history":[`, tinyMessage, tinyBad, `]}`}, bad, "history[%d].role", "history"},
		{"providerResponse anthropic", "providerResponse", n, [4]string{`{"provider":"anthropic","status":200,"body":{"content":[`, `{"type":"text","text":"hi"}`, "", `]}}`}, "", "", "body.content"},
		{"decodeHistory", "decodeHistory", n, [4]string{`{"conversation_id":"c","history":[`, tinyMessage, "", `]}`}, "", "", "history"},
		{"extractiveSummary", "extractiveSummary", n, [4]string{`{"model":"m","max_tokens":5,"messages":[`, tinyMessage, "", `]}`}, "", "", "messages"},
	}
}

// padded is c with its elements' text ("hi", "s") padded with pad
// letters, the bad last element as it is.
func (c largeCase) padded(pad int) largeCase {
	p := strings.Repeat("x", pad)
	item := c.parts[1]
	if strings.Contains(item, `"hi"`) {
		item = strings.Replace(item, `"hi"`, `"hi `+p+`"`, 1)
	} else {
		item = strings.Replace(item, `"s"`, `"s `+p+`"`, 1)
	}
	c.parts[1] = item
	return c
}

// overLimit is c with one element more than api.MaxElements: refused
// with too_large naming the array, before anything is decoded.
func (c largeCase) overLimit() largeCase {
	c.n = api.MaxElements + 1
	c.code, c.field = "too_large", c.array
	return c
}

// checkLarge calls c.export on in, c's input, and checks its answer.
func checkLarge(t testing.TB, inst *wasmhost.Instance, c largeCase, in []byte) {
	t.Helper()
	out, err := inst.Call(context.Background(), c.export, in)
	if c.code == "" {
		require.NoError(t, err)
		require.NotEmpty(t, out)
		return
	}
	var ce *wasmhost.CallError
	require.True(t, errors.As(err, &ce), "want a reported error, got %v", err)
	require.Equal(t, c.code, ce.Code, ce.Message)
	field := c.field
	if strings.Contains(field, "%d") {
		field = fmt.Sprintf(field, c.n-1)
	}
	require.True(t, strings.HasPrefix(ce.Message, field+": "), "error %q should name %q", ce.Message, field)
}

// TestHostileLargeInputs sends the bad-input cases (200,000
// messages, batches or batch contents, valid or with the last one bad)
// through the real .wasm, staged as the clipfold hosts call it and
// through Extism memory as a plain Extism SDK does: every call answers
// with its result or an error (docs/spec.md#errors-and-limits) naming
// the element. How long they take is BenchmarkLargeInputs's business
// (the target: 5 s).
func TestHostileLargeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute of 6 MB calls through the .wasm")
	}
	staged, plain := benchInstances(t)
	for _, c := range largeCases(200_000) {
		in := c.input()
		checkBothPaths(t, staged, plain, c, in)
	}
}

// checkBothPaths runs checkLarge on in as subtests "<case>/staged"
// and "<case>/plain".
func checkBothPaths(t *testing.T, staged, plain *wasmhost.Instance, c largeCase, in []byte) {
	t.Run(c.name+"/staged", func(t *testing.T) { checkLarge(t, staged, c, in) })
	t.Run(c.name+"/plain", func(t *testing.T) { checkLarge(t, plain, c, in) })
}

// largeCaseAtLimit is largeCases' case i at the largest input the
// plug-in takes: api.MaxElements elements, each padded so that the input
// is within a kilobyte of the 64 MiB limit.
func largeCaseAtLimit(i int) largeCase {
	c := largeCases(api.MaxElements)[i]
	p := c.parts
	fixed := len(p[0]) + len(p[3]) + len(p[2]) + c.n // and the commas
	padded := c.n                                    // elements that get padding
	if p[2] != "" {
		padded--
	}
	pad := (api.MaxInputBytes-1024-fixed)/padded - len(p[1]) - len(" ")
	return c.padded(pad)
}

// BenchmarkLargeInputs times the bad-input cases at 200,000 elements and at
// the 64 MiB limit, each on a fresh instance (the first call pays for
// growing the plug-in's heap), staged and through Extism memory (a plain
// Extism SDK's path). The target: every one answers within 5 s.
// Inputs are made one case at a time: all of them at 64 MiB would hold
// a gigabyte.
func BenchmarkLargeInputs(b *testing.B) {
	ctx := context.Background()
	staged := newRuntime(b, wasmhost.Options{MaxMemory: -1})
	plain := newRuntime(b, wasmhost.Options{NoStaging: true})
	kinds := len(largeCases(0))
	for _, size := range []string{"n=200000", "64MiB", "over"} {
		for i := 0; i < kinds; i++ {
			c := largeCases(200_000)[i]
			switch size {
			case "64MiB":
				c = largeCaseAtLimit(i)
			case "over":
				if c.code != "" {
					continue // the same refusal as the valid case's
				}
				c = c.overLimit()
			}
			in := c.input()
			for _, p := range []struct {
				name string
				rt   *wasmhost.Runtime
			}{{"staged", staged}, {"plain", plain}} {
				b.Run(fmt.Sprintf("%s/%s/%s", strings.ReplaceAll(c.name, " ", "_"), size, p.name), func(b *testing.B) {
					b.SetBytes(int64(len(in)))
					for j := 0; j < b.N; j++ {
						b.StopTimer()
						inst, err := p.rt.NewInstance(ctx)
						require.NoError(b, err)
						b.StartTimer()
						checkLarge(b, inst, c, in)
						b.StopTimer()
						_ = inst.Close(ctx)
						b.StartTimer()
					}
				})
			}
		}
	}
}

// TestLargeCasesFitTheLimit: BenchmarkLargeInputs' 64 MiB inputs are
// under the limit and within a kilobyte of it, with api.MaxElements
// elements.
func TestLargeCasesFitTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 64 MiB inputs")
	}
	for i, c := range largeCases(0) {
		at := largeCaseAtLimit(i)
		require.Equal(t, api.MaxElements, at.n, c.name)
		n := len(at.input())
		require.LessOrEqual(t, n, api.MaxInputBytes, c.name)
		require.Greater(t, n, api.MaxInputBytes-1024-at.n, c.name)
	}
}

// TestLargeInputsOverTheLimit: one element over api.MaxElements, in every
// export's array, is refused with too_large naming the array, staged and
// through Extism memory.
func TestLargeInputsOverTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("8 MB calls through the .wasm")
	}
	staged, plain := benchInstances(t)
	for _, c := range largeCases(0) {
		if c.code != "" {
			continue
		}
		c = c.overLimit()
		in := c.input()
		checkBothPaths(t, staged, plain, c, in)
	}
}
