package core

// DefaultPrepareAt is prepare_at's default: a host starts a compaction in
// the background when the history counts more than 70% of the limit
// (docs/spec.md#compaction-ahead-of-time).
const DefaultPrepareAt = 0.7

// ChunkTokensAuto is the max_chunk_tokens value that sizes chunks to the
// summarizer's input (Config.ChunkTokens).
const ChunkTokensAuto = "auto"

// minChunkTokens is the smallest chunk in tokens: what a timeout's
// re-chunking never goes below.
const minChunkTokens = 1000

// ChunkTokens is the max_chunk_tokens in effect: the key's value (0:
// chunks by chunk_size), or under "auto" as many tokens as one
// summarization request holds beside everything else it carries. The
// summarizer is taken to read as much as the model whose history it
// compacts (model_max_tokens); a request also carries the system prompt,
// the directive, the summary folded in (for the first chunk the prior
// clip-archive: up to clip_first + clip_last + 1 summaries) and room for
// the answer (max_summary_tokens each). At least 1000 tokens. Under
// summarizer "extractive" "auto" chunks by chunk_size: no model reads the
// chunk, and each summary is a few lines whatever its chunk's size.
func (c *Config) ChunkTokens() int {
	if !c.ChunkTokensAuto {
		return c.MaxChunkTokens
	}
	if c.Summarizer == SummarizerExtractive {
		return 0
	}
	prompt := c.Prompt
	if prompt == "" {
		prompt = DefaultSystemPrompt
	}
	reserve := int64(TextTokens(prompt, c)) + int64(TextTokens(DefaultDirective, c))
	reserve += (int64(c.ClipFirst) + int64(c.ClipLast) + 2) * int64(c.MaxSummaryTokens)
	return int(max(int64(c.ModelMaxTokens)-reserve, minChunkTokens))
}

// PrepareLimit is the soft threshold of a history whose limit is limit:
// ⌊prepare_at × limit⌋. Over it a host prepares a compaction ahead of time
// (shouldCompact's prepare_limit).
func (c *Config) PrepareLimit(limit int) int {
	return int(c.PrepareAt * float64(limit))
}
