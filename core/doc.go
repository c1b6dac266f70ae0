// Package core is clipfold's pure domain logic: message and batch types,
// configuration, importance scoring, the split and chunk rules, the token
// estimate, summarization request builders, the clip-archive text, batch
// metadata, provider wire formats, the extractive summarizer, and the
// compress pipeline written against small ports (LLM, Memory, Committer,
// Clock).
//
// core does no I/O and knows nothing about WebAssembly or JSON libraries:
// the plug-in (../plugin) decodes JSON into these types with ../wire and
// binds the ports to Extism host functions; Go hosts import core directly.
// Keeping it pure is what lets the same vectors run natively and through
// the .wasm, so the two can never drift.
package core
