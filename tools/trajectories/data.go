package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clipfold/clipfold/internal/benchkit"
	"github.com/tidwall/gjson"
)

// The benchmark's input: testdata/trajectories/<name>.json, each a JSON
// array of native (docs/spec.md#message) messages: a system message, user
// turns, assistant messages with OpenAI-style tool calls, the tool messages
// answering them, final assistant text (written once by
// tools/trajectories/gen/generate.py; sources in the directory's README).

type message = benchkit.Message

// trajectory is one agent run.
type trajectory struct {
	Name           string
	Path           string
	ConversationID string
	Source         string // "bfcl" or "agentdojo": the name up to its first '-'
	Messages       []message
	// callOf maps a tool call id to the index of the message making it.
	callOf map[string]int
}

// loadTrajectories reads the trajectories named in names (all of dir's
// when empty), in name order.
func loadTrajectories(dir string, names []string) ([]*trajectory, error) {
	if len(names) == 0 {
		var err error
		if names, err = benchkit.ListNames(dir, ".json"); err != nil {
			return nil, err
		}
	}
	var out []*trajectory
	for _, name := range names {
		t, err := loadTrajectory(filepath.Join(dir, name+".json"))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func loadTrajectory(path string) (*trajectory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	t := &trajectory{Name: name, Path: path, Source: strings.SplitN(name, "-", 2)[0], callOf: map[string]int{}}
	seen := map[string]bool{}
	for i, r := range raws {
		m := benchkit.ParseMessage(r)
		if m.ID == "" {
			return nil, fmt.Errorf("%s: message %d has no id", path, i)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("%s: duplicate id %s", path, m.ID)
		}
		seen[m.ID] = true
		if i == 0 {
			t.ConversationID = gjson.GetBytes(r, "conversation_id").String()
		}
		for _, tc := range m.ToolCalls {
			t.callOf[tc.ID] = i
		}
		if m.Role == "tool" {
			if _, ok := t.callOf[m.ToolCallID]; !ok {
				return nil, fmt.Errorf("%s: message %s answers call %q, which no earlier message makes", path, m.ID, m.ToolCallID)
			}
		}
		t.Messages = append(t.Messages, m)
	}
	if t.ConversationID == "" {
		return nil, fmt.Errorf("%s: the first message has no conversation_id", path)
	}
	return t, nil
}

// modelCalls returns the indexes of the messages a model wrote in
// answer to what came before: each assistant message that does not
// follow another assistant message. The model's input for the call
// producing Messages[k] is Messages[:k].
func (t *trajectory) modelCalls() []int {
	var ks []int
	for k, m := range t.Messages {
		if m.Role == "assistant" && (k == 0 || t.Messages[k-1].Role != "assistant") {
			ks = append(ks, k)
		}
	}
	return ks
}

// call returns the call a tool message answers (ok false when none).
func (t *trajectory) call(m *message) (benchkit.ToolCall, bool) {
	k, ok := t.callOf[m.ToolCallID]
	if !ok || m.Role != "tool" {
		return benchkit.ToolCall{}, false
	}
	for _, tc := range t.Messages[k].ToolCalls {
		if tc.ID == m.ToolCallID {
			return tc, true
		}
	}
	return benchkit.ToolCall{}, false
}

// writePrefix writes Messages[:k] as a JSON array to path.
func (t *trajectory) writePrefix(path string, k int) error {
	var b strings.Builder
	b.WriteString("[\n")
	for i := 0; i < k; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.Write(t.Messages[i].Raw)
	}
	b.WriteString("\n]\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
