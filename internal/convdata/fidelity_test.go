package convdata

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// question is one entry of a .questions.json file (format in
// testdata/fidelity/README.md).
type question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Category string   `json:"category"`
	Answers  []string `json:"answers"`
	Anchors  []string `json:"anchors,omitempty"`
	Evidence []string `json:"evidence"`
	Session  int      `json:"session"`
	Position string   `json:"position"`
}

type session struct {
	N        int    `json:"n"`
	Date     string `json:"date"`
	First    string `json:"first"`
	Last     string `json:"last"`
	Messages int    `json:"messages"`
}

type questionsFile struct {
	ConversationID string     `json:"conversation_id"`
	File           string     `json:"file"`
	Style          string     `json:"style"`
	Messages       int        `json:"messages"`
	Sessions       []session  `json:"sessions"`
	Questions      []question `json:"questions"`
}

// Limits of testdata/fidelity/README.md and RATIONALE.md, "Fidelity
// questions are paraphrased, and their answers occur once".
const (
	fidMinMessages  = 400
	fidMaxMessages  = 1500
	fidMinFileBytes = 150_000
	fidMinSessions  = 15
	fidMinQuestions = 20
	fidMaxQuestions = 40
	// rareShare: a word is rare when fewer than this share of the
	// conversation's messages contain it.
	rareShare = 0.01
	// minSharedLen: shorter words may be shared by a question and its
	// evidence (they are common: "dog", "car", "new").
	minSharedLen = 5
)

var categories = []string{"when", "who", "what", "where", "how-many"}

// readFidelity reads a benchmark conversation and its questions.
func readFidelity(t *testing.T, path string) ([]message, *questionsFile, int) {
	t.Helper()
	var qf questionsFile
	msgs, size := readConversation(t, path, ".questions.json", &qf)
	return msgs, &qf, size
}

// TestFidelityConversations holds every file of testdata/fidelity to its
// README.
func TestFidelityConversations(t *testing.T) {
	for _, path := range conversationFiles(t, fidelityDir) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			msgs, qf, size := readFidelity(t, path)
			if size < fidMinFileBytes || size > maxFileBytes {
				t.Errorf("%d bytes, want %d..%d", size, fidMinFileBytes, maxFileBytes)
			}
			if qf.File != filepath.Base(path) {
				t.Errorf("questions file names %q", qf.File)
			}
			if err := validateFidelity(msgs, qf); err != nil {
				t.Error(err)
			}
		})
	}
}

// validateFidelity checks a benchmark conversation and its sidecar: the
// message shape, the sessions, and every question.
func validateFidelity(msgs []message, qf *questionsFile) error {
	if err := validateMessages(msgs, fidMinMessages, fidMaxMessages); err != nil {
		return err
	}
	if qf.ConversationID != msgs[0].ConversationID || qf.Messages != len(msgs) || qf.Style == "" {
		return fmt.Errorf("sidecar: conversation %q, %d messages, style %q; the conversation is %q, %d messages",
			qf.ConversationID, qf.Messages, qf.Style, msgs[0].ConversationID, len(msgs))
	}
	starts, err := validateSessions(msgs, qf.Sessions)
	if err != nil {
		return err
	}
	return validateQuestions(msgs, starts, qf.Questions)
}

// validateSessions checks the sidecar's sessions: at least fidMinSessions,
// together every message in order, each of at least 4 messages within one
// UTC day, on increasing days, described rightly. It returns the index
// of each session's first message.
func validateSessions(msgs []message, sessions []session) ([]int, error) {
	if len(sessions) < fidMinSessions {
		return nil, fmt.Errorf("%d sessions, want at least %d", len(sessions), fidMinSessions)
	}
	index := indexByID(msgs)
	starts := make([]int, len(sessions))
	next, prevDay := 0, ""
	for k, s := range sessions {
		first, ok1 := index[s.First]
		last, ok2 := index[s.Last]
		switch {
		case !ok1 || !ok2:
			return nil, fmt.Errorf("session %d: unknown message %s or %s", k+1, s.First, s.Last)
		case s.N != k+1:
			return nil, fmt.Errorf("session %d is numbered %d", k+1, s.N)
		case first != next:
			return nil, fmt.Errorf("session %d starts at message %d (%s), want %d: sessions must cover the messages in order", k+1, first, s.First, next)
		case last-first+1 < 4 || s.Messages != last-first+1:
			return nil, fmt.Errorf("session %d: %d messages (%s to %s), sidecar says %d, want at least 4", k+1, last-first+1, s.First, s.Last, s.Messages)
		}
		day := msgs[first].CreatedAt[:10]
		if msgs[last].CreatedAt[:10] != day || s.Date != day {
			return nil, fmt.Errorf("session %d runs from %s to %s (sidecar date %s): a session stays within one day", k+1, msgs[first].CreatedAt, msgs[last].CreatedAt, s.Date)
		}
		if day <= prevDay {
			return nil, fmt.Errorf("session %d is on %s, not after the day of session %d, %s", k+1, day, k, prevDay)
		}
		starts[k], next, prevDay = first, last+1, day
	}
	if next != len(msgs) {
		return nil, fmt.Errorf("the sessions end at message %d of %d", next, len(msgs))
	}
	return starts, nil
}

// validateQuestions checks every question: evidence that exists,
// answers that occur in the evidence and nowhere else (a "when"
// question's: the first evidence's date, with anchors in it), no answer
// given away, no rare word shared with the evidence, session and position
// right, and the questions spread over categories and the conversation.
func validateQuestions(msgs []message, starts []int, qs []question) error {
	if len(qs) < fidMinQuestions || len(qs) > fidMaxQuestions {
		return fmt.Errorf("%d questions, want %d..%d", len(qs), fidMinQuestions, fidMaxQuestions)
	}
	index := indexByID(msgs)
	texts := make([]string, len(msgs))
	lower := make([]string, len(msgs))
	df := map[string]int{} // stem → messages containing it
	for i := range msgs {
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
			continue
		}
		ids[q.ID] = true
		if strings.TrimSpace(q.Question) == "" || len(q.Answers) == 0 || len(q.Evidence) == 0 {
			errs = append(errs, fmt.Errorf("%s: incomplete", where))
			continue
		}
		if !slices.Contains(categories, q.Category) {
			errs = append(errs, fmt.Errorf("%s: unknown category %q", where, q.Category))
			continue
		}
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
		first := index[q.Evidence[0]]
		if want := sessionOf(starts, first); q.Session != want {
			errs = append(errs, fmt.Errorf("%s: session %d, its first evidence is in session %d", where, q.Session, want))
			continue
		}
		if want := positionOf(first, len(msgs)); q.Position != want {
			errs = append(errs, fmt.Errorf("%s: position %q, its first evidence is %q", where, q.Position, want))
			continue
		}
		perCat[q.Category]++
		perPos[q.Position]++
		for _, a := range q.Answers {
			if strings.Contains(strings.ToLower(q.Question), strings.ToLower(a)) {
				errs = append(errs, fmt.Errorf("%s: the question gives its answer %q away", where, a))
				continue questions
			}
		}
		if q.Category == "when" {
			t, _ := time.Parse(timeLayout, msgs[first].CreatedAt)
			if want := dateAnswers(t); !slices.Equal(want, q.Answers) {
				errs = append(errs, fmt.Errorf("%s: answers %q, want the first evidence's date %q", where, q.Answers, want))
				continue
			}
			if len(q.Anchors) == 0 {
				errs = append(errs, fmt.Errorf("%s: a when question needs anchors", where))
				continue
			}
			for _, a := range q.Anchors {
				if !strings.Contains(lower[first], strings.ToLower(a)) {
					errs = append(errs, fmt.Errorf("%s: anchor %q is not in %s", where, a, q.Evidence[0]))
					continue questions
				}
			}
		} else {
			if len(q.Anchors) != 0 {
				errs = append(errs, fmt.Errorf("%s: anchors are for when questions only", where))
				continue
			}
			evLower := strings.ToLower(ev.String())
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
		if c == "when" {
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

// sessionOf is the 1-based session of message i.
func sessionOf(starts []int, i int) int {
	n := 0
	for k, start := range starts {
		if i >= start {
			n = k + 1
		}
	}
	return n
}

// positionOf: early (first 35% of the messages), middle (35–70%), late.
func positionOf(i, n int) string {
	switch {
	case i*100 < n*35:
		return "early"
	case i*100 < n*70:
		return "middle"
	}
	return "late"
}

// dateAnswers spells a date the three ways the benchmark's answers do.
func dateAnswers(t time.Time) []string {
	t = t.UTC()
	return []string{t.Format("2006-01-02"), t.Format("January 2, 2006"), t.Format("2 January 2006")}
}

// messageText is what a message says: its content, and the names and
// arguments of its tool calls.
func messageText(m *message) string {
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
