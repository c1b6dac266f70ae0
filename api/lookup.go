package api

import "slices"

// Handler is an export's behaviour: input bytes to output bytes.
type Handler func(e *Env, in []byte) ([]byte, error)

// Lookup returns the handler of a pure export (docs/spec.md#exports) by name;
// compress is not one: it needs host functions, see Env.Compress.
func Lookup(export string) (Handler, bool) {
	h, ok := exports[export]
	return h, ok
}

// ExportNames lists the pure exports Lookup knows, sorted.
func ExportNames() []string {
	names := make([]string, 0, len(exports))
	for n := range exports {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var exports = map[string]Handler{
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
	"decodeHistory":               (*Env).DecodeHistory,
	"buildMemoryRead":             (*Env).BuildMemoryRead,
	"planCommit":                  (*Env).PlanCommit,
	"planAppend":                  (*Env).PlanAppend,
	"parseBlocks":                 (*Env).ParseBlocks,
}
