package api

import (
	"runtime"
	"runtime/debug"
	"strconv"
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

// BenchmarkInputDecodeAnthropic: 10k messages in the Anthropic shape, a
// third of them tool_use turns and a third tool_result turns: the shape
// work (content blocks, tool parts) on top of the plain path.
func BenchmarkInputDecodeAnthropic(b *testing.B) {
	in := anthropicHistory(10_000)
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

func anthropicHistory(n int) []byte {
	b := []byte(`{"messages":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		id := strconv.Itoa(i / 3)
		switch i % 3 {
		case 0:
			b = append(b, `{"role":"user","content":"the deploy failed because the config had a typo; we agreed to add validation and a test for it before Friday, any idea what broke?"}`...)
		case 1:
			b = append(b, `{"role":"assistant","content":[{"type":"text","text":"Let me look at the logs."},{"type":"tool_use","id":"toolu_`+id+`","name":"search_logs","input":{"service":"export","since":"24h"}}]}`...)
		case 2:
			b = append(b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_`+id+`","content":[{"type":"text","text":"02:00:13 ERROR upstream timeout after 30s (attempt 1/3)"}]}]}`...)
		}
	}
	return append(b, `]}`...)
}
