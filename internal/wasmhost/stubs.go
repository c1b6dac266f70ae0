package wasmhost

import (
	"context"

	extism "github.com/extism/go-sdk"
)

// HostFunctionNames are the imports of docs/spec.md#host-functions, in
// namespace extism:host/user.
var HostFunctionNames = []string{"llm_complete", "memory_list", "compaction_commit"}

// NoHostFunctions returns host functions that answer every call with an
// "unavailable" error object: enough to instantiate the plug-in for the
// pure exports, and an honest failure if compress is called anyway.
func NoHostFunctions() []extism.HostFunction {
	out := make([]extism.HostFunction, 0, len(HostFunctionNames))
	for _, name := range HostFunctionNames {
		msg := []byte(`{"error":{"code":"unavailable","message":"this host provides no ` + name + `","retryable":false}}`)
		f := extism.NewHostFunctionWithStack(name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			off, err := p.WriteBytes(msg)
			if err != nil {
				panic(err)
			}
			stack[0] = off
		}, []extism.ValueType{extism.ValueTypeI64}, []extism.ValueType{extism.ValueTypeI64})
		f.SetNamespace("extism:host/user")
		out = append(out, f)
	}
	return out
}
