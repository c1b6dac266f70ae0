package api_test

import (
	"fmt"
	"log"

	"github.com/clipfold/clipfold/api"
)

// Call an export natively, with the same JSON the plug-in takes and
// answers: here providerRequest, which builds the HTTP body of a model
// call for a provider.
func ExampleLookup() {
	providerRequest, ok := api.Lookup("providerRequest")
	if !ok {
		log.Fatal("no providerRequest export")
	}
	out, err := providerRequest(api.DefaultEnv(), []byte(`{"provider":"openai","request":{
		"system":"Summarize.","messages":[{"role":"user","content":"The car is picked up at Reno airport."}],
		"max_tokens":200,"model":"gpt-4o-mini"}}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"url_path":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Summarize."},{"role":"user","content":"The car is picked up at Reno airport."}],"max_tokens":200,"temperature":0}}
}

// The pure exports Lookup knows; compress needs host functions and runs
// through Env.Compress.
func ExampleExportNames() {
	for _, name := range api.ExportNames() {
		fmt.Println(name)
	}
	// Output:
	// buildClipArchive
	// buildMemoryRead
	// buildResummarizationRequest
	// buildSummarizationRequest
	// chunk
	// decodeHistory
	// estimateTokens
	// extractiveSummary
	// parseBlocks
	// planAppend
	// planCommit
	// providerRequest
	// providerResponse
	// score
	// searchQuery
	// shouldCompact
	// split
	// version
}
