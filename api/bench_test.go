package api

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/clipfold/clipfold/internal/benchdata"
)

// The input pipeline's two passes on 10k messages, alone. Run them under
// wazero too, to see what a change does to the plug-in without building
// it:
//
//	GOOS=wasip1 GOARCH=wasm go test -c -o /tmp/api.wasm ./api
//	go run github.com/tetratelabs/wazero/cmd/wazero run /tmp/api.wasm -test.run='^$' -test.bench=Input
//
// The collector is off while timing, as in the plug-in's pure exports.

func BenchmarkInputScan(b *testing.B) {
	in := benchdata.History(10_000)
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if _, ok := scanInput(in); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkInputDecode(b *testing.B) {
	in := benchdata.History(10_000)
	o, ok := scanInput(in)
	if !ok {
		b.Fatal("refused")
	}
	b.SetBytes(int64(len(in)))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for i := 0; i < b.N; i++ {
		if i%50 == 0 {
			b.StopTimer()
			runtime.GC()
			b.StartTimer()
		}
		if _, _, err := decodeMessages(o, "messages", msgRules{}); err != nil {
			b.Fatal(err)
		}
	}
}
