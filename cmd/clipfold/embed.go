package main

import "embed"

// embedded holds the plug-in when `make` copied it into embedded/ before
// building; README.md is always there so the pattern always matches.
//
//go:embed embedded
var embedded embed.FS

// embeddedWasm returns the embedded plug-in, or nil when the binary was
// built without one.
func embeddedWasm() []byte {
	b, err := embedded.ReadFile("embedded/clipfold.wasm")
	if err != nil || len(b) == 0 {
		return nil
	}
	return b
}
