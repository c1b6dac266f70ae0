// Package benchdata is the conversation every performance benchmark runs
// on: n messages of about 400 bytes of JSON each (the size the performance
// targets were set for), user
// and assistant prose with every tenth message a question, one second
// apart, and config keep_recent 20. The Go benchmarks call History;
// tools/benchreport writes the same bytes to files for the Node host's
// bench.mjs (--inputs), so both hosts measure identical inputs.
// bindings/node/bench.mjs carries a port of this generator for runs on
// its own.
package benchdata

import (
	"strconv"
	"strings"
	"testing"
)

const words = "the deploy failed because the config had a typo; we agreed to add validation and a test for it before Friday "

var text = strings.Repeat(words, 5)

// History is the JSON input of split or score for n messages.
func History(n int) []byte {
	b := make([]byte, 0, 64+n*410)
	b = append(b, `{"messages":[`...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		start, size := (i*7)%len(words), 220+(i*37)%150
		content := text[start : start+size]
		b = append(b, `{"id":"m`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","conversation_id":"bench","role":"`...)
		b = append(b, role...)
		b = append(b, `","content":"`...)
		b = append(b, content...)
		if i%10 == 3 {
			b = append(b, " — any idea?"...)
		}
		b = append(b, `","created_at":"`...)
		b = appendTime(b, i)
		b = append(b, `"}`...)
	}
	return append(b, `],"config":{"keep_recent":20}}`...)
}

// appendTime writes 2026-02-28T10:00:00.000Z plus i seconds (i < 14 days'
// worth, as every size benchmarked is).
func appendTime(b []byte, i int) []byte {
	sec := 10*3600 + i
	day := 28 + sec/86400
	month := 2
	if day > 28 { // 2026 is not a leap year
		day -= 28
		month = 3
	}
	sec %= 86400
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = append(b, "2026-"...)
	b = two(b, month)
	b = append(b, '-')
	b = two(b, day)
	b = append(b, 'T')
	b = two(b, sec/3600)
	b = append(b, ':')
	b = two(b, sec/60%60)
	b = append(b, ':')
	b = two(b, sec%60)
	return append(b, ".000Z"...)
}

// Run is the body of every export benchmark: call on in, b.N times, with
// throughput and allocations reported. One call first, untimed (b.Loop
// resets the timer): a plug-in instance's first large call grows its
// heap, which is the cold-start benchmarks' business, and at 100k
// messages b.N is often 1.
func Run(b *testing.B, in []byte, call func(in []byte) error) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	if err := call(in); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := call(in); err != nil {
			b.Fatal(err)
		}
	}
}
