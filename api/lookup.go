package api

// Handler is an export's behaviour: input bytes to output bytes.
type Handler func(e *Env, in []byte) ([]byte, error)

// Exports maps each pure export's name (SPEC §3) to its handler. compress
// is not here: it needs host functions, see Env.Compress.
var Exports = map[string]Handler{
	"score":                       (*Env).Score,
	"split":                       (*Env).Split,
	"chunk":                       (*Env).Chunk,
	"estimateTokens":              (*Env).EstimateTokens,
	"shouldCompact":               (*Env).ShouldCompact,
	"buildSummarizationRequest":   (*Env).BuildSummarizationRequest,
	"buildResummarizationRequest": (*Env).BuildResummarizationRequest,
	"buildClipArchive":            (*Env).BuildClipArchive,
	"version":                     (*Env).VersionInfo,
	"extractiveSummary":           (*Env).ExtractiveSummary,
	"providerRequest":             (*Env).ProviderRequest,
	"providerResponse":            (*Env).ProviderResponse,
	"searchQuery":                 (*Env).SearchQuery,
}
