package convdata

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Each rule catches what it is for: the committed files, altered one way
// at a time, are refused with the rule's error.

func TestSampleRulesReject(t *testing.T) {
	base, facts, _ := readSample(t, filepath.Join(conversationsDir, "support-chat.json"))
	if err := validateMessages(base, sampleMinMessages, sampleMaxMessages); err != nil {
		t.Fatalf("the committed conversation: %v", err)
	}
	// The first tool message, and the assistant message whose call it
	// answers.
	tool := slices.IndexFunc(base, func(m message) bool { return m.Role == "tool" })
	call := slices.IndexFunc(base, func(m message) bool {
		return slices.ContainsFunc(m.ToolCalls, func(c toolCall) bool { return c.ID == base[tool].ToolCallID })
	})
	if tool < 0 || call < 0 {
		t.Fatal("support-chat.json has no tool call and result to test with")
	}
	mutate := func(f func(m []message) []message) []message { return f(slices.Clone(base)) }
	for name, c := range map[string]struct {
		msgs []message
		want string
	}{
		"duplicate id":        {mutate(func(m []message) []message { m[5].ID = m[4].ID; return m }), "duplicate id"},
		"id not prefix-NNNN":  {mutate(func(m []message) []message { m[5].ID = "sup-5"; return m }), "is not prefix-NNNN"},
		"bad role":            {mutate(func(m []message) []message { m[3].Role = "bot"; return m }), "invalid role"},
		"time not rising":     {mutate(func(m []message) []message { m[9].CreatedAt = m[8].CreatedAt; return m }), "not after the previous"},
		"time without millis": {mutate(func(m []message) []message { m[9].CreatedAt = m[9].CreatedAt[:19] + "Z"; return m }), "is not 2006"},
		"other conversation":  {mutate(func(m []message) []message { m[7].ConversationID = "x"; return m }), "conversation_id"},
		"orphan tool result":  {mutate(func(m []message) []message { return slices.Delete(m, call, call+1) }), "answers no earlier call"},
		"unanswered call":     {mutate(func(m []message) []message { return slices.Delete(m, tool, tool+1) }), "never answered"},
		"call answered twice": {mutate(func(m []message) []message {
			m[tool+1].Role, m[tool+1].ToolCallID, m[tool+1].ToolCalls = "tool", m[tool].ToolCallID, nil
			return m
		}), "answered twice"},
		"tool call on a user message": {mutate(func(m []message) []message {
			m[call].Role = "user"
			return m
		}), "tool calls on a user message"},
		"arguments not JSON": {mutate(func(m []message) []message {
			m[call].ToolCalls = slices.Clone(m[call].ToolCalls)
			m[call].ToolCalls[0].Function.Arguments = "{"
			return m
		}), "are not JSON"},
		"empty content":    {mutate(func(m []message) []message { m[2].Content = ""; m[2].ToolCalls = nil; return m }), "empty message"},
		"too short":        {base[:100], "100 messages"},
		"system not first": {mutate(func(m []message) []message { m[0].Role = "user"; return m }), "want the system instructions"},
	} {
		refused(t, name, validateMessages(c.msgs, sampleMinMessages, sampleMaxMessages), c.want)
	}

	if err := validateFacts(base, facts); err != nil {
		t.Fatalf("the committed facts: %v", err)
	}
	alter := func(f func(fs []fact)) []fact {
		fs := slices.Clone(facts)
		for i := range fs {
			fs[i].MessageIDs = slices.Clone(fs[i].MessageIDs)
			fs[i].MustContain = slices.Clone(fs[i].MustContain)
		}
		f(fs)
		return fs
	}
	for name, c := range map[string]struct {
		facts []fact
		want  string
	}{
		"stated late":     {alter(func(fs []fact) { fs[0].MessageIDs = []string{base[len(base)-1].ID} }), "not in the first 20%"},
		"literal missing": {alter(func(fs []fact) { fs[0].MustContain = append(fs[0].MustContain, "zebra crossing") }), `"zebra crossing" is not in`},
		"unknown message": {alter(func(fs []fact) { fs[1].MessageIDs = []string{"sup-9999"} }), "unknown message"},
		"no query":        {alter(func(fs []fact) { fs[2].Query = "" }), "incomplete"},
		"too few":         {facts[:3], "3 facts"},
	} {
		refused(t, name, validateFacts(base, c.facts), c.want)
	}
}

func TestFidelityRulesReject(t *testing.T) {
	msgs, qf, _ := readFidelity(t, filepath.Join(fidelityDir, "friends-chat.json"))
	if err := validateFidelity(msgs, qf); err != nil {
		t.Fatalf("the committed file: %v", err)
	}
	starts, err := validateSessions(msgs, qf.Sessions)
	if err != nil {
		t.Fatal(err)
	}
	find := func(cat string) int {
		i := slices.IndexFunc(qf.Questions, func(q question) bool { return q.Category == cat })
		if i < 0 {
			t.Fatalf("no %s question", cat)
		}
		return i
	}
	what, when := find("what"), find("when")
	index := indexByID(msgs)
	evidence := strings.ToLower(messageText(&msgs[index[qf.Questions[what].Evidence[0]]]))
	// A word of the evidence (5+ letters) that count(n) messages hold.
	wordHeldBy := func(count func(n int) bool) string {
		for _, w := range words(evidence) {
			if len(w) < minSharedLen || strings.Contains(strings.ToLower(qf.Questions[what].Question), w) {
				continue
			}
			n := 0
			for i := range msgs {
				if strings.Contains(strings.ToLower(messageText(&msgs[i])), w) {
					n++
				}
			}
			if count(n) {
				return w
			}
		}
		t.Fatal("no word in the evidence to test with")
		return ""
	}
	rareWord := wordHeldBy(func(n int) bool { return n == 1 })
	commonWord := wordHeldBy(func(n int) bool { return n > 20 })
	mutate := func(f func(qs []question)) []question {
		qs := slices.Clone(qf.Questions)
		for i := range qs {
			qs[i].Answers = slices.Clone(qs[i].Answers)
			qs[i].Evidence = slices.Clone(qs[i].Evidence)
		}
		f(qs)
		return qs
	}
	for name, c := range map[string]struct {
		qs   []question
		want string
	}{
		"unknown evidence":       {mutate(func(qs []question) { qs[what].Evidence = []string{"chat-9999"} }), "unknown evidence"},
		"answer not in evidence": {mutate(func(qs []question) { qs[what].Answers = []string{"zebra crossing"} }), "is not in the evidence"},
		"answer elsewhere too":   {mutate(func(qs []question) { qs[what].Answers = []string{commonWord} }), "which is not evidence"},
		"answer in question":     {mutate(func(qs []question) { qs[what].Question += " " + qs[what].Answers[0] + "?" }), "gives its answer"},
		"rare word shared":       {mutate(func(qs []question) { qs[what].Question = "What about " + rareWord + "?" }), "rare word"},
		"wrong date":             {mutate(func(qs []question) { qs[when].Answers[0] = "1999-01-01" }), "want the first evidence's date"},
		"anchor not in evidence": {mutate(func(qs []question) { qs[when].Anchors = []string{"zebra crossing"} }), "anchor"},
		"anchors on a what":      {mutate(func(qs []question) { qs[what].Anchors = []string{"x"} }), "anchors are for when questions only"},
		"bad category":           {mutate(func(qs []question) { qs[what].Category = "why" }), "unknown category"},
		"duplicate id":           {mutate(func(qs []question) { qs[1].ID = qs[0].ID }), "duplicate id"},
		"wrong session":          {mutate(func(qs []question) { qs[what].Session++ }), "its first evidence is in session"},
		"wrong position":         {mutate(func(qs []question) { qs[what].Position = "nowhere" }), "its first evidence is"},
		"too few":                {qf.Questions[:10], "10 questions"},
	} {
		refused(t, name, validateQuestions(msgs, starts, c.qs), c.want)
	}

	sessions := func(f func(ss []session) []session) []session { return f(slices.Clone(qf.Sessions)) }
	for name, c := range map[string]struct {
		ss   []session
		want string
	}{
		"too few": {qf.Sessions[:10], "10 sessions"},
		"two days": {sessions(func(ss []session) []session {
			ss[0].Last, ss[0].Messages = ss[1].Last, ss[0].Messages+ss[1].Messages
			ss = slices.Delete(ss, 1, 2)
			for k := range ss {
				ss[k].N = k + 1
			}
			return ss
		}), "within one day"},
		"gap": {sessions(func(ss []session) []session {
			ss = slices.Delete(ss, 3, 4)
			for k := range ss {
				ss[k].N = k + 1
			}
			return ss
		}), "cover the messages in order"},
		"wrong count": {sessions(func(ss []session) []session { ss[2].Messages++; return ss }), "sidecar says"},
		"wrong date":  {sessions(func(ss []session) []session { ss[2].Date = "1999-01-01"; return ss }), "sidecar date"},
		"cut short":   {sessions(func(ss []session) []session { return ss[:len(ss)-1] }), "the sessions end at message"},
	} {
		_, err := validateSessions(msgs, c.ss)
		refused(t, "sessions "+name, err, c.want)
	}
}

// refused fails the test unless err is an error containing want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v, want an error about %q", what, err, want)
	}
}
