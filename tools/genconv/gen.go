package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// gen accumulates one conversation. All randomness comes from its own
// splitmix64 stream, so a scenario's output depends on its seed and on
// nothing else.
type gen struct {
	state  uint64
	conv   string
	prefix string // message id prefix
	now    time.Time
	msgs   []message
	facts  []fact
	// pending holds tool calls of the last assistant message not answered yet.
	pending []string
	// sessions holds the index of the first message of each session
	// (fidelity conversations only; see fidelity.go).
	sessions []int
	// questions are the fidelity questions asked about the conversation.
	questions []question
}

func newGen(seed uint64) *gen { return &gen{state: seed} }

// next is splitmix64: tiny, fast, and fixed forever (math/rand's streams
// are not promised to stay the same across Go releases).
func (g *gen) next() uint64 {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (g *gen) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(g.next() % uint64(n))
}

// between returns a number in [lo, hi].
func (g *gen) between(lo, hi int) int { return lo + g.intn(hi-lo+1) }

// chance is true with probability p.
func (g *gen) chance(p float64) bool { return float64(g.next()>>11)/float64(1<<53) < p }

// pick returns one of xs.
func (g *gen) pick(xs ...string) string { return xs[g.intn(len(xs))] }

// hex returns n random lower-case hex digits.
func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.intn(16)]
	}
	return string(b)
}

// tick moves the clock forward by lo..hi seconds plus some milliseconds.
func (g *gen) tick(lo, hi int) {
	g.now = g.now.Add(time.Duration(g.between(lo, hi))*time.Second + time.Duration(1+g.intn(999))*time.Millisecond)
}

// stamp prints the clock as the conversation's created_at.
func (g *gen) stamp() string { return g.now.UTC().Format("2006-01-02T15:04:05.000Z") }

func (g *gen) add(role, content string, calls []toolCall, callID string) string {
	id := fmt.Sprintf("%s-%04d", g.prefix, len(g.msgs)+1)
	g.msgs = append(g.msgs, message{ID: id, ConversationID: g.conv, Role: role, Content: content,
		ToolCalls: calls, ToolCallID: callID, CreatedAt: g.stamp()})
	return id
}

func (g *gen) system(text string) string {
	g.tick(0, 0)
	return g.add("system", text, nil, "")
}

// user says something after a human pause.
func (g *gen) user(text string) string {
	g.tick(8, 120)
	return g.add("user", text, nil, "")
}

// assistant answers after a model-sized pause.
func (g *gen) assistant(text string) string {
	g.tick(2, 25)
	return g.add("assistant", text, nil, "")
}

// call makes one assistant message with one tool call; text may be empty
// (OpenAI-style "content": "" with tool_calls). It returns the call id for
// result.
func (g *gen) call(text, name string, args ...any) string {
	g.tick(1, 12)
	id := "call_" + g.hex(24)
	g.add("assistant", text, []toolCall{{ID: id, Type: "function", Function: toolFunction{Name: name, Arguments: jsonArgs(args...)}}}, "")
	return id
}

// result is the tool's answer to callID.
func (g *gen) result(callID, content string) string {
	g.tick(1, 20)
	return g.add("tool", content, nil, callID)
}

// tool is call followed by its result; it returns the result's id.
func (g *gen) tool(text, name string, output string, args ...any) string {
	id := g.call(text, name, args...)
	return g.result(id, output)
}

// parallel makes one assistant message with several tool calls and then
// their results in order.
func (g *gen) parallel(text string, calls [][]any, outputs []string) {
	g.tick(1, 12)
	var tcs []toolCall
	for _, c := range calls {
		tcs = append(tcs, toolCall{ID: "call_" + g.hex(24), Type: "function",
			Function: toolFunction{Name: c[0].(string), Arguments: jsonArgs(c[1:]...)}})
	}
	g.add("assistant", text, tcs, "")
	for i, tc := range tcs {
		g.result(tc.ID, outputs[i])
	}
}

// fact records one entry of the sidecar.
func (g *gen) fact(text, query string, mustContain []string, ids ...string) {
	g.facts = append(g.facts, fact{Fact: text, Query: query, MustContain: mustContain, MessageIDs: ids})
}

// jsonArgs builds a tool call's arguments: a JSON object of the key/value
// pairs in the order given.
func jsonArgs(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// fill expands {a|b|c} alternatives in a template, choosing one each, so
// templates read naturally and still vary.
func (g *gen) fill(tpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i:], '}')
		if j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:i])
		alts := strings.Split(tpl[i+1:i+j], "|")
		b.WriteString(alts[g.intn(len(alts))])
		tpl = tpl[i+j+1:]
	}
}

// sprinkle returns one of the templates filled, for the many small
// messages (acknowledgements, interjections) that make a session real. It
// avoids repeating any of the last few messages word for word, which
// people rarely do.
func (g *gen) sprinkle(tpls []string) string {
	var s string
	for try := 0; try < 8; try++ {
		s = g.fill(tpls[g.intn(len(tpls))])
		if !g.recent(s, 8) {
			break
		}
	}
	return s
}

// recent reports whether one of the last n messages has content s.
func (g *gen) recent(s string, n int) bool {
	for i := len(g.msgs) - 1; i >= 0 && i >= len(g.msgs)-n; i-- {
		if g.msgs[i].Content == s {
			return true
		}
	}
	return false
}

// pickDistinct returns k different elements of xs (all of them if k ≥
// len(xs)), in random order.
func (g *gen) pickDistinct(k int, xs []string) []string {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	for i := len(idx) - 1; i > 0; i-- {
		j := g.intn(i + 1)
		idx[i], idx[j] = idx[j], idx[i]
	}
	if k > len(xs) {
		k = len(xs)
	}
	out := make([]string, k)
	for i := range out {
		out[i] = xs[idx[i]]
	}
	return out
}

// nextDay moves the clock to the next day, between fromHour and toHour.
func (g *gen) nextDay(fromHour, toHour int) {
	d := g.now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	g.now = d.Add(time.Duration(fromHour)*time.Hour + time.Duration(g.intn((toHour-fromHour)*3600))*time.Second)
}
