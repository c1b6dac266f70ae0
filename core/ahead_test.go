package core

import (
	"strings"
	"testing"
)

func TestChunkTokensAuto(t *testing.T) {
	c := DefaultConfig()
	if err := c.Set("max_chunk_tokens", Value{Kind: KindString, Str: "auto"}, ""); err != nil {
		t.Fatal(err)
	}
	reserve := TextTokens(DefaultSystemPrompt, &c) + TextTokens(DefaultDirective, &c) + 6*1024
	if got, want := c.ChunkTokens(), 200000-reserve; got != want {
		t.Fatalf("auto at the defaults: %d, want %d (200000 less the prompt, the directive and six summaries)", got, want)
	}
	// A smaller window, a longer answer, a prompt of its own: all counted.
	for _, kv := range [][2]string{{"model_max_tokens", "50000"}, {"max_summary_tokens", "2000"}, {"prompt", strings.Repeat("Be brief. ", 100)}} {
		v, err := ParseValue(kv[0], kv[1], "")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Set(kv[0], v, ""); err != nil {
			t.Fatal(err)
		}
	}
	reserve = TextTokens(c.Prompt, &c) + TextTokens(DefaultDirective, &c) + 6*2000
	if got, want := c.ChunkTokens(), 50000-reserve; got != want {
		t.Fatalf("auto: %d, want %d", got, want)
	}
	// Never below 1000 tokens.
	_ = c.Set("model_max_tokens", Value{Kind: KindNumber, Num: 10}, "")
	if got := c.ChunkTokens(); got != 1000 {
		t.Fatalf("auto with a 10-token window: %d, want the 1000-token floor", got)
	}
	// The extractive summarizer chunks by chunk_size.
	_ = c.Set("summarizer", Value{Kind: KindString, Str: SummarizerExtractive}, "")
	if got := c.ChunkTokens(); got != 0 {
		t.Fatalf("auto under the extractive summarizer: %d, want 0 (chunk_size)", got)
	}
	// A number, then null, undo "auto".
	_ = c.Set("summarizer", Value{Kind: KindString, Str: SummarizerLLM}, "")
	_ = c.Set("max_chunk_tokens", Value{Kind: KindNumber, Num: 3000}, "")
	if got := c.ChunkTokens(); got != 3000 {
		t.Fatalf("a number after auto: %d, want 3000", got)
	}
	_ = c.Set("max_chunk_tokens", Value{Kind: KindString, Str: "auto"}, "")
	_ = c.Set("max_chunk_tokens", Value{Kind: KindNull}, "")
	if got := c.ChunkTokens(); got != 0 || c.ChunkTokensAuto {
		t.Fatalf("null after auto: %d (auto %v), want unset", got, c.ChunkTokensAuto)
	}
	// The text form (manifest config, --set, TOML) reads "auto" too.
	v, err := ParseValue("max_chunk_tokens", " auto ", "")
	if err != nil || v.Kind != KindString || v.Str != "auto" {
		t.Fatalf("ParseValue(max_chunk_tokens, auto) = %+v, %v", v, err)
	}
	// Anything else is refused, naming the key.
	err = c.Set("max_chunk_tokens", Value{Kind: KindString, Str: "big"}, "config.max_chunk_tokens")
	if err == nil || !strings.Contains(err.Error(), `config.max_chunk_tokens: must be an integer ≥ 1, "auto" or null, got "big"`) {
		t.Fatalf("max_chunk_tokens \"big\": %v", err)
	}
}

func TestPrepareAt(t *testing.T) {
	c := DefaultConfig()
	if got := c.PrepareLimit(160000); got != 112000 {
		t.Fatalf("default prepare limit of 160000: %d, want 112000 (0.7)", got)
	}
	if err := c.Set("prepare_at", Value{Kind: KindNumber, Num: 0.5}, ""); err != nil {
		t.Fatal(err)
	}
	if got := c.PrepareLimit(801); got != 400 {
		t.Fatalf("prepare_at 0.5 of 801: %d, want 400", got)
	}
	for _, bad := range []Value{{Kind: KindNumber, Num: 0}, {Kind: KindNumber, Num: 1.5}, {Kind: KindString, Str: "soon"}} {
		err := c.Set("prepare_at", bad, "config.prepare_at")
		if err == nil || !strings.HasPrefix(err.Error(), "invalid_input: config.prepare_at: must be") {
			t.Fatalf("prepare_at %+v: %v", bad, err)
		}
	}
}
