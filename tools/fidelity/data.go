package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clipfold/clipfold/internal/benchkit"
)

// The benchmark's input: testdata/fidelity/<name>.json (a conversation in
// the native Message shape, docs/spec.md#message) and <name>.questions.json
// (its questions; the format, and the rules internal/convdata's tests hold
// both files to, in testdata/fidelity/README.md).

type question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Category string   `json:"category"`
	Answers  []string `json:"answers"`
	Anchors  []string `json:"anchors,omitempty"`
	Evidence []string `json:"evidence"`
	Session  int      `json:"session"`
	Position string   `json:"position"`
	// accept is Answers plus, for "when" questions, more spellings of the
	// date (acceptedDates); nil means Answers.
	accept []string
}

// accepted returns the strings that answer q.
func (q *question) accepted() []string {
	if q.accept != nil {
		return q.accept
	}
	return q.Answers
}

// acceptedDates adds common spellings of every ISO date (YYYY-MM-DD)
// among answers: "Mar 4, 2023", "4 Mar 2023", "March 4 2023",
// "2023/03/04", besides the file's "2023-03-04", "March 4, 2023" and
// "4 March 2023".
func acceptedDates(answers []string) []string {
	out := append([]string(nil), answers...)
	seen := map[string]bool{}
	for _, a := range out {
		seen[a] = true
	}
	for _, a := range answers {
		t, err := time.Parse("2006-01-02", a)
		if err != nil {
			continue
		}
		for _, layout := range []string{"2006-01-02", "January 2, 2006", "2 January 2006", "Jan 2, 2006", "2 Jan 2006", "January 2 2006", "2006/01/02"} {
			if v := t.Format(layout); !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

type questionsFile struct {
	ConversationID string     `json:"conversation_id"`
	File           string     `json:"file"`
	Style          string     `json:"style"`
	Messages       int        `json:"messages"`
	Sessions       []struct{} `json:"sessions"`
	Questions      []question `json:"questions"`
}

// message is one message of a conversation file.
type message = benchkit.Message

// conversation is one benchmark conversation.
type conversation struct {
	Name      string
	Path      string
	Q         questionsFile
	Messages  []message
	ByID      map[string]int
	Questions []question // the questions asked in this run (maybe a subset)
}

// loadConversations reads the conversations named in names (all of dir's
// when names is empty), in name order.
func loadConversations(dir string, names []string) ([]*conversation, error) {
	if len(names) == 0 {
		var err error
		if names, err = benchkit.ListNames(dir, ".questions.json"); err != nil {
			return nil, err
		}
	}
	var out []*conversation
	for _, name := range names {
		c, err := loadConversation(dir, name)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func loadConversation(dir, name string) (*conversation, error) {
	qpath := filepath.Join(dir, name+".questions.json")
	qb, err := os.ReadFile(qpath)
	if err != nil {
		return nil, fmt.Errorf("conversation %q: %w", name, err)
	}
	c := &conversation{Name: name, ByID: map[string]int{}}
	if err := json.Unmarshal(qb, &c.Q); err != nil {
		return nil, fmt.Errorf("%s: %w", qpath, err)
	}
	c.Path = filepath.Join(dir, c.Q.File)
	data, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, fmt.Errorf("conversation %q: %w", name, err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Path, err)
	}
	for i, r := range raws {
		m := benchkit.ParseMessage(r)
		if m.ID == "" {
			return nil, fmt.Errorf("%s: message %d has no id", c.Path, i)
		}
		if _, dup := c.ByID[m.ID]; dup {
			return nil, fmt.Errorf("%s: duplicate id %s", c.Path, m.ID)
		}
		c.ByID[m.ID] = i
		c.Messages = append(c.Messages, m)
	}
	for k := range c.Q.Questions {
		q := &c.Q.Questions[k]
		if q.Category == "when" {
			q.accept = acceptedDates(q.Answers)
		}
		for _, id := range q.Evidence {
			if _, ok := c.ByID[id]; !ok {
				return nil, fmt.Errorf("%s: question %s: evidence %s is not in %s", qpath, q.ID, id, c.Path)
			}
		}
	}
	c.Questions = c.Q.Questions
	return c, nil
}

// subset picks n questions spread evenly over qs (all when n ≤ 0 or
// n ≥ len(qs)), keeping their order.
func subset(qs []question, n int) []question {
	if n <= 0 || n >= len(qs) {
		return qs
	}
	out := make([]question, 0, n)
	for k := 0; k < n; k++ {
		out = append(out, qs[k*len(qs)/n])
	}
	return out
}
