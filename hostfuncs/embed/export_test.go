package embed

// The response decoders, for the fuzz tests.
var (
	DecodeOpenAI = decodeOpenAI
	DecodeOllama = decodeOllama
)
