package embed_test

import (
	"context"
	"fmt"
	"log"

	"github.com/clipfold/clipfold/embed"
	"github.com/clipfold/clipfold/hostfuncs"
	extism "github.com/extism/go-sdk"
	"github.com/tidwall/gjson"
)

// Load the shipped plug-in with the Extism Go SDK directly, as a program
// that does not use package clipfold would, and call an export. The host
// functions are a Host's: with no LLM and no store they answer that none
// is configured, which the pure exports never ask.
func Example() {
	ctx := context.Background()
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: embed.Wasm}}}
	p, err := extism.NewPlugin(ctx, manifest, extism.PluginConfig{EnableWasi: true}, hostfuncs.Bind(&hostfuncs.Host{}))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(ctx)
	_, out, err := p.Call("version", nil)
	if err != nil {
		log.Fatal(err)
	}
	v := gjson.ParseBytes(out)
	fmt.Println("plug-in ABI", v.Get("abi").Int(), "version set:", v.Get("version").String() != "")
	// Output:
	// plug-in ABI 1 version set: true
}
