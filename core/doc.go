// Package core is clipfold's pure domain logic: message and batch types,
// configuration, importance scoring, the split and chunk rules, the token
// estimate, summarization request builders, the clip-archive text, batch
// metadata, provider wire formats, the extractive summarizer, and the
// compress pipeline written against small ports (LLM, Memory, Committer,
// Clock).
//
// core does no I/O and knows nothing about WebAssembly or Extism: the
// plug-in (../plugin) decodes its JSON input into these types with
// package api (../api) and binds the ports to Extism host functions; Go
// hosts import core directly. Keeping it pure is what lets the same tests
// and conformance vectors run natively and through the .wasm, so the two
// can never drift.
//
// Two dependencies beyond the standard library, each kept inside:
//
//   - github.com/tidwall/gjson reads the few JSON documents core itself
//     must parse (provider response bodies, archived batch metadata, tool
//     call arguments). It reads without reflection and without copying,
//     which keeps the TinyGo build small; no gjson type crosses core's
//     API. core writes JSON with its own appender (jsonw.go) for the same
//     reason, and imports encoding/json only in tests.
//   - unsafe, in the hot loops the benchmarks measured: a string over an
//     id buffer without a copy (ids.go), eight-byte ASCII checks in
//     runeCount (runes.go) and the keyword automaton's table walk
//     (keywords.go). Eight-byte loads read as numbers go through
//     internal/le, so they mean the same on big-endian machines;
//     FuzzRuneCount and FuzzKeywordsAndLength hold the fast loops to the
//     plain ones.
package core
