package main

// The fidelity benchmark's conversations (testdata/fidelity): long
// conversations of different styles over many dated sessions, each with a
// sidecar of questions a user might ask much later, worded as a person
// would ask them (paraphrased: no rare word of the answer's message), with
// their answers and the ids of the messages holding them. tools/fidelity
// replays them through `clipfold run` and checks what the final context
// and `clipfold search` still know.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// fidelityScenario is one benchmark conversation.
type fidelityScenario struct {
	name  string
	seed  uint64
	style string // one line: what kind of conversation it is
	write func(g *gen)
}

var fidelityScenarios = []fidelityScenario{
	{"friends-chat", 0xf1de_0001, "casual chat between two friends over many months (LoCoMo-like): life events, hobbies, plans", writeFriends},
	{"hosting-support", 0xf1de_0002, "technical support: a customer of a managed database host and a support engineer, ticket after ticket", writeHosting},
	{"ops-agent", 0xf1de_0003, "an operations agent with tool calls (OpenAI-style tool_calls and tool results) running a small web shop's servers", writeOpsAgent},
	{"novel-workshop", 0xf1de_0004, "creative collaboration: an author planning and drafting a novel with a writing assistant", writeNovel},
	{"household-assistant", 0xf1de_0005, "a personal assistant helping a family with money, a renovation and a move: numbers, names, dates", writeHousehold},
}

// Question categories.
const (
	catWhen    = "when"
	catWho     = "who"
	catWhat    = "what"
	catWhere   = "where"
	catHowMany = "how-many"
)

var categories = []string{catWhen, catWho, catWhat, catWhere, catHowMany}

// question is one entry of a .questions.json file.
type question struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Category string `json:"category"`
	// Answers: any one of them present means answered (case-insensitive).
	// For "when" questions they are the evidence message's date in three
	// spellings: 2023-05-08, May 8, 2023, 8 May 2023.
	Answers []string `json:"answers"`
	// Anchors (when questions only): words of the evidence one of which
	// must stand on the same line as the date for a summary line to count
	// as answering (a bare date range proves nothing about the event).
	Anchors  []string `json:"anchors,omitempty"`
	Evidence []string `json:"evidence"`
	// Session is the 1-based session of the first evidence message;
	// Position says where in the conversation it is: early (first 35% of
	// the messages), middle (35–70%) or late.
	Session  int    `json:"session"`
	Position string `json:"position"`
}

// sessionInfo describes one session in the sidecar.
type sessionInfo struct {
	N        int    `json:"n"`
	Date     string `json:"date"`
	First    string `json:"first"`
	Last     string `json:"last"`
	Messages int    `json:"messages"`
}

// questionsFile is a .questions.json sidecar.
type questionsFile struct {
	ConversationID string        `json:"conversation_id"`
	File           string        `json:"file"`
	Style          string        `json:"style"`
	Messages       int           `json:"messages"`
	Sessions       []sessionInfo `json:"sessions"`
	Questions      []question    `json:"questions"`
}

// Limits the validator enforces on every fidelity conversation.
const (
	fidMinMessages  = 400
	fidMaxMessages  = 1500
	fidMinSessions  = 15
	fidMinQuestions = 20
	fidMaxQuestions = 40
	fidMinFileBytes = 150_000
	// rareShare: a word is rare when fewer than this share of the
	// conversation's messages contain it.
	rareShare = 0.01
	// minSharedLen: shorter words may be shared by a question and its
	// evidence (they are common: "dog", "car", "new").
	minSharedLen = 5
)

// startSession marks the next message as the first of a new session.
func (g *gen) startSession() { g.sessions = append(g.sessions, len(g.msgs)) }

// session moves the clock minDays..maxDays days ahead, to a time between
// fromHour and toHour UTC, and starts a session there.
func (g *gen) session(minDays, maxDays, fromHour, toHour int) {
	d := g.now.Truncate(24 * time.Hour).Add(time.Duration(g.between(minDays, maxDays)) * 24 * time.Hour)
	g.now = d.Add(time.Duration(fromHour)*time.Hour + time.Duration(g.intn((toHour-fromHour)*3600))*time.Second)
	g.startSession()
}

// ask records a question whose answers are literal strings of its
// evidence messages.
func (g *gen) ask(category, text string, answers []string, evidence ...string) {
	g.questions = append(g.questions, question{Question: text, Category: category, Answers: answers, Evidence: evidence})
}

// askWhen records a "when" question: the answer is the date of the first
// evidence message, and anchors are words of that message naming the
// event.
func (g *gen) askWhen(text string, anchors []string, evidence ...string) {
	var t time.Time
	for i := range g.msgs {
		if g.msgs[i].ID == evidence[0] {
			t, _ = time.Parse(time.RFC3339Nano, g.msgs[i].CreatedAt)
		}
	}
	g.questions = append(g.questions, question{Question: text, Category: catWhen, Answers: dateAnswers(t),
		Anchors: anchors, Evidence: evidence})
}

// dateAnswers spells a date the three ways the benchmark accepts.
func dateAnswers(t time.Time) []string {
	t = t.UTC()
	return []string{t.Format("2006-01-02"), t.Format("January 2, 2006"), t.Format("2 January 2006")}
}

// generateFidelity builds, validates and encodes every fidelity
// conversation and its questions.
func generateFidelity() ([]file, error) {
	var files []file
	for _, sc := range fidelityScenarios {
		g := newGen(sc.seed)
		sc.write(g)
		qf := finishQuestions(g, sc)
		if err := validateFidelity(g.msgs, g.sessions, qf.Questions); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		conv, err := encodeMessages(g.msgs)
		if err != nil {
			return nil, err
		}
		if len(conv) > maxFileBytes || len(conv) < fidMinFileBytes {
			return nil, fmt.Errorf("%s: %d bytes, want %d..%d", sc.name, len(conv), fidMinFileBytes, maxFileBytes)
		}
		qs, err := encodeIndented(qf)
		if err != nil {
			return nil, err
		}
		files = append(files, file{kindFidelity, sc.name + ".json", conv}, file{kindFidelity, sc.name + ".questions.json", qs})
	}
	return files, nil
}

// finishQuestions numbers the questions and fills in where their evidence
// lies.
func finishQuestions(g *gen, sc fidelityScenario) questionsFile {
	qf := questionsFile{ConversationID: g.conv, File: sc.name + ".json", Style: sc.style, Messages: len(g.msgs)}
	index := make(map[string]int, len(g.msgs))
	for i := range g.msgs {
		index[g.msgs[i].ID] = i
	}
	for k, start := range g.sessions {
		end := len(g.msgs)
		if k+1 < len(g.sessions) {
			end = g.sessions[k+1]
		}
		if start >= end {
			continue // validateFidelity reports it
		}
		qf.Sessions = append(qf.Sessions, sessionInfo{N: k + 1, Date: g.msgs[start].CreatedAt[:10],
			First: g.msgs[start].ID, Last: g.msgs[end-1].ID, Messages: end - start})
	}
	for k := range g.questions {
		q := g.questions[k]
		q.ID = fmt.Sprintf("%s-q%02d", g.prefix, k+1)
		if i, ok := index[q.Evidence[0]]; ok {
			q.Position = positionOf(i, len(g.msgs))
			for s, start := range g.sessions {
				if i >= start {
					q.Session = s + 1
				}
			}
		}
		qf.Questions = append(qf.Questions, q)
	}
	return qf
}

func positionOf(i, n int) string {
	switch {
	case i*100 < n*35:
		return "early"
	case i*100 < n*70:
		return "middle"
	}
	return "late"
}

// messageText is what a message says: its content, and the names and
// arguments of its tool calls.
func messageText(m *message) string {
	if len(m.ToolCalls) == 0 {
		return m.Content
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		b.WriteString("\n")
		b.WriteString(c.Function.Name)
		b.WriteString(" ")
		b.WriteString(c.Function.Arguments)
	}
	return b.String()
}

// words splits text into lower-case runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// stem strips common English inflections, so "painting" and "painted"
// count as the same word as "paint" when a question is checked against
// its evidence. Deliberately crude: it only has to catch a question that
// repeats its evidence's rare word in another form.
func stem(w string) string {
	n := utf8.RuneCountInString(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case n > 4 && strings.HasSuffix(w, "es"):
		w = w[:len(w)-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:len(w)-1]
	}
	// "propose" and "proposed" both become "propos".
	if utf8.RuneCountInString(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// validateFidelity checks a benchmark conversation and its questions:
// the message shape, the sessions (≥ 15, each within one UTC day, days
// apart), and every question: evidence that exists, answers that occur in
// the evidence and nowhere else, wording that shares no rare word with the
// evidence, and evidence spread over the conversation.
func validateFidelity(msgs []message, sessions []int, qs []question) error {
	if err := validateMessages(msgs, fidMinMessages, fidMaxMessages); err != nil {
		return err
	}
	if err := validateSessions(msgs, sessions); err != nil {
		return err
	}
	if len(qs) < fidMinQuestions || len(qs) > fidMaxQuestions {
		return fmt.Errorf("%d questions, want %d..%d", len(qs), fidMinQuestions, fidMaxQuestions)
	}
	index := make(map[string]int, len(msgs))
	texts := make([]string, len(msgs))
	lower := make([]string, len(msgs))
	df := map[string]int{} // stem → messages containing it
	for i := range msgs {
		index[msgs[i].ID] = i
		texts[i] = messageText(&msgs[i])
		lower[i] = strings.ToLower(texts[i])
		seen := map[string]bool{}
		for _, w := range words(texts[i]) {
			if s := stem(w); !seen[s] {
				seen[s] = true
				df[s]++
			}
		}
	}
	rare := func(s string) bool { return float64(df[s]) < rareShare*float64(len(msgs)) }
	ids := map[string]bool{}
	perCat := map[string]int{}
	perPos := map[string]int{}
	var errs []error
questions:
	for _, q := range qs {
		where := fmt.Sprintf("question %s (%q)", q.ID, q.Question)
		if ids[q.ID] {
			errs = append(errs, fmt.Errorf("%s: duplicate id", where))
			continue questions
		}
		ids[q.ID] = true
		if strings.TrimSpace(q.Question) == "" || len(q.Answers) == 0 || len(q.Evidence) == 0 {
			errs = append(errs, fmt.Errorf("%s: incomplete", where))
			continue questions
		}
		if !contains(categories, q.Category) {
			errs = append(errs, fmt.Errorf("%s: unknown category %q", where, q.Category))
			continue questions
		}
		perCat[q.Category]++
		perPos[q.Position]++
		isEvidence := map[int]bool{}
		var ev strings.Builder
		for _, id := range q.Evidence {
			i, ok := index[id]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: unknown evidence message %s", where, id))
				continue questions
			}
			isEvidence[i] = true
			ev.WriteString(texts[i])
			ev.WriteByte('\n')
		}
		evLower := strings.ToLower(ev.String())
		for _, a := range q.Answers {
			if strings.Contains(strings.ToLower(q.Question), strings.ToLower(a)) {
				errs = append(errs, fmt.Errorf("%s: the question gives its answer %q away", where, a))
				continue questions
			}
		}
		if q.Category == catWhen {
			first := msgs[index[q.Evidence[0]]]
			t, _ := time.Parse(time.RFC3339Nano, first.CreatedAt)
			if want := dateAnswers(t); strings.Join(want, "|") != strings.Join(q.Answers, "|") {
				errs = append(errs, fmt.Errorf("%s: answers %q, want the first evidence's date %q", where, q.Answers, want))
				continue questions
			}
			if len(q.Anchors) == 0 {
				errs = append(errs, fmt.Errorf("%s: a when question needs anchors", where))
				continue questions
			}
			for _, a := range q.Anchors {
				if !strings.Contains(strings.ToLower(texts[index[q.Evidence[0]]]), strings.ToLower(a)) {
					errs = append(errs, fmt.Errorf("%s: anchor %q is not in %s", where, a, q.Evidence[0]))
					continue questions
				}
			}
		} else {
			if len(q.Anchors) != 0 {
				errs = append(errs, fmt.Errorf("%s: anchors are for when questions only", where))
				continue questions
			}
			for _, a := range q.Answers {
				la := strings.ToLower(a)
				if !strings.Contains(evLower, la) {
					errs = append(errs, fmt.Errorf("%s: answer %q is not in the evidence %v", where, a, q.Evidence))
					continue questions
				}
				for i := range msgs {
					if !isEvidence[i] && strings.Contains(lower[i], la) {
						errs = append(errs, fmt.Errorf("%s: answer %q also occurs in %s, which is not evidence", where, a, msgs[i].ID))
						continue questions
					}
				}
			}
		}
		evStems := map[string]bool{}
		for _, w := range words(ev.String()) {
			if utf8.RuneCountInString(w) >= minSharedLen {
				evStems[stem(w)] = true
			}
		}
		for _, w := range words(q.Question) {
			if utf8.RuneCountInString(w) < minSharedLen {
				continue
			}
			if s := stem(w); evStems[s] && rare(s) && !functionWords[w] {
				errs = append(errs, fmt.Errorf("%s: shares the rare word %q with its evidence (in %d of %d messages)", where, w, df[s], len(msgs)))
				continue questions
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, c := range categories {
		want := 2
		if c == catWhen {
			want = 3
		}
		if perCat[c] < want {
			return fmt.Errorf("%d %s questions, want at least %d", perCat[c], c, want)
		}
	}
	if perPos["early"] < 5 || perPos["middle"] < 5 || perPos["late"] < 3 {
		return fmt.Errorf("evidence spread early/middle/late = %d/%d/%d, want at least 5/5/3", perPos["early"], perPos["middle"], perPos["late"])
	}
	if early := perPos["early"] + perPos["middle"]; early*100 < len(qs)*70 {
		return fmt.Errorf("only %d of %d questions have their evidence in the first 70%% of the conversation, want 70%%", early, len(qs))
	}
	return nil
}

// validateSessions checks that there are enough sessions, each within one
// UTC day, consecutive sessions on different days.
func validateSessions(msgs []message, sessions []int) error {
	if len(sessions) < fidMinSessions {
		return fmt.Errorf("%d sessions, want at least %d", len(sessions), fidMinSessions)
	}
	if sessions[0] != 0 {
		return fmt.Errorf("the first session starts at message %d, want 0", sessions[0])
	}
	prevDay := ""
	for k, start := range sessions {
		end := len(msgs)
		if k+1 < len(sessions) {
			end = sessions[k+1]
		}
		if end-start < 4 {
			return fmt.Errorf("session %d has %d messages, want at least 4", k+1, end-start)
		}
		day := msgs[start].CreatedAt[:10]
		if msgs[end-1].CreatedAt[:10] != day {
			return fmt.Errorf("session %d runs from %s to %s: a session must stay within one day", k+1, msgs[start].CreatedAt, msgs[end-1].CreatedAt)
		}
		if day <= prevDay {
			return fmt.Errorf("session %d is on %s, not after the previous session's day %s", k+1, day, prevDay)
		}
		prevDay = day
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// overlapReport prints, for every fidelity question, the words (3+
// letters, by stem) it shares with its evidence and in how many messages
// each occurs: what a lexical search has to go on. It is a writing aid
// (go run ./tools/genconv -overlap) and validates nothing.
func overlapReport(w io.Writer) {
	for _, sc := range fidelityScenarios {
		g := newGen(sc.seed)
		sc.write(g)
		qf := finishQuestions(g, sc)
		df := map[string]int{}
		texts := map[string]string{}
		for i := range g.msgs {
			t := messageText(&g.msgs[i])
			texts[g.msgs[i].ID] = t
			seen := map[string]bool{}
			for _, x := range words(t) {
				if s := stem(x); !seen[s] {
					seen[s] = true
					df[s]++
				}
			}
		}
		fmt.Fprintf(w, "%s: %d messages, %d sessions, %d questions\n", sc.name, len(g.msgs), len(g.sessions), len(qf.Questions))
		none := 0
		for _, q := range qf.Questions {
			ev := map[string]bool{}
			for _, id := range q.Evidence {
				for _, x := range words(texts[id]) {
					ev[stem(x)] = true
				}
			}
			var shared []string
			seen := map[string]bool{}
			for _, x := range words(q.Question) {
				s := stem(x)
				if utf8.RuneCountInString(x) >= 3 && ev[s] && !seen[s] && !overlapIgnore[x] {
					seen[s] = true
					shared = append(shared, fmt.Sprintf("%s(%d)", x, df[s]))
				}
			}
			if len(shared) == 0 {
				none++
			}
			fmt.Fprintf(w, "  %s %-6s %-8s %q shares %v\n", q.ID, q.Position, q.Category, q.Question, shared)
		}
		fmt.Fprintf(w, "  %d of %d questions share no word; rare = in fewer than %.1f messages\n", none, len(qf.Questions), rareShare*float64(len(g.msgs)))
	}
}

// overlapIgnore are function words the overlap report leaves out.
var overlapIgnore = map[string]bool{"the": true, "and": true, "did": true, "was": true, "for": true, "her": true, "his": true,
	"what": true, "when": true, "where": true, "who": true, "how": true, "many": true, "much": true, "which": true, "she": true,
	"with": true, "from": true, "that": true, "this": true, "has": true, "have": true, "been": true, "does": true, "are": true, "its": true}

// functionWords are English function words of five letters or more: a
// question may share them with its evidence however seldom the
// conversation uses them (they carry no topic).
var functionWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against among before being below between beyond could doing
during either every further having herself himself itself might myself neither other others ourselves shall should
their theirs themselves there these those though through under until where whether which while would yourself
yourselves`) {
		m[w] = true
	}
	return m
}()
