package embeddings

// The response decoders, for the fuzz tests.
var (
	DecodeOpenAI = decodeOpenAI
	DecodeOllama = decodeOllama
)
