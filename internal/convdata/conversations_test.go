package convdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The two directories, from this package's.
var (
	conversationsDir = filepath.Join("..", "..", "testdata", "conversations")
	fidelityDir      = filepath.Join("..", "..", "testdata", "fidelity")
)

// message is the native Message shape the files use, and nothing more: a
// field of another name is an error when a file is read.
type message struct {
	ID             string     `json:"id"`
	ConversationID string     `json:"conversation_id"`
	Role           string     `json:"role"`
	Content        string     `json:"content"`
	ToolCalls      []toolCall `json:"tool_calls,omitempty"`
	ToolCallID     string     `json:"tool_call_id,omitempty"`
	CreatedAt      string     `json:"created_at"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// fact is one entry of a sample conversation's .facts.json.
type fact struct {
	Fact        string   `json:"fact"`
	Query       string   `json:"query"`
	MustContain []string `json:"must_contain"`
	MessageIDs  []string `json:"message_ids"`
}

// Limits of testdata/conversations/README.md.
const (
	sampleMinMessages = 300
	sampleMaxMessages = 1500
	maxFileBytes      = 1_500_000
	minFacts          = 8
	maxFacts          = 15
)

// timeLayout is created_at as every file writes it: UTC, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z"

var idPattern = regexp.MustCompile(`^[a-z]+-[0-9]{4}$`)

// readStrict decodes a JSON file into v, refusing fields v does not have.
func readStrict(path string, v any) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// conversationFiles are the conversations of dir: its .json files that
// are not sidecars.
func conversationFiles(t *testing.T, dir string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range all {
		if !strings.HasSuffix(p, ".facts.json") && !strings.HasSuffix(p, ".questions.json") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no conversation in %s", dir)
	}
	return out
}

// validateMessages checks a conversation's shape: its length, the system
// message first, one conversation id, unique ids of the form prefix-NNNN,
// valid roles, created_at strictly increasing, tool calls only on
// assistant messages and each answered exactly once by a later tool
// message, and no empty message.
func validateMessages(msgs []message, minMsgs, maxMsgs int) error {
	if len(msgs) < minMsgs || len(msgs) > maxMsgs {
		return fmt.Errorf("%d messages, want %d..%d", len(msgs), minMsgs, maxMsgs)
	}
	if msgs[0].Role != "system" {
		return fmt.Errorf("first message is %q, want the system instructions", msgs[0].Role)
	}
	conv := msgs[0].ConversationID
	if conv == "" {
		return fmt.Errorf("%s: no conversation_id", msgs[0].ID)
	}
	ids := make(map[string]bool, len(msgs))
	calls := map[string]bool{} // tool call id → answered
	var prev time.Time
	for i := range msgs {
		m := &msgs[i]
		if !idPattern.MatchString(m.ID) {
			return fmt.Errorf("message %d: id %q is not prefix-NNNN", i, m.ID)
		}
		if ids[m.ID] {
			return fmt.Errorf("message %d: duplicate id %s", i, m.ID)
		}
		ids[m.ID] = true
		if m.ConversationID != conv {
			return fmt.Errorf("%s: conversation_id %q, the first message's is %q", m.ID, m.ConversationID, conv)
		}
		switch m.Role {
		case "user", "assistant", "system", "tool":
		default:
			return fmt.Errorf("%s: invalid role %q", m.ID, m.Role)
		}
		t, err := time.Parse(timeLayout, m.CreatedAt)
		if err != nil {
			return fmt.Errorf("%s: created_at %q is not %s", m.ID, m.CreatedAt, timeLayout)
		}
		if i > 0 && !t.After(prev) {
			return fmt.Errorf("%s: created_at %s not after the previous message's", m.ID, m.CreatedAt)
		}
		prev = t
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return fmt.Errorf("%s: tool calls on a %s message", m.ID, m.Role)
		}
		for _, c := range m.ToolCalls {
			if _, dup := calls[c.ID]; dup || !strings.HasPrefix(c.ID, "call_") || c.Type != "function" || c.Function.Name == "" {
				return fmt.Errorf("%s: bad or duplicate tool call %q", m.ID, c.ID)
			}
			if !json.Valid([]byte(c.Function.Arguments)) {
				return fmt.Errorf("%s: arguments of %s are not JSON", m.ID, c.ID)
			}
			calls[c.ID] = false
		}
		if m.Role == "tool" {
			answered, ok := calls[m.ToolCallID]
			if !ok {
				return fmt.Errorf("%s: tool_call_id %q answers no earlier call", m.ID, m.ToolCallID)
			}
			if answered {
				return fmt.Errorf("%s: tool_call_id %q answered twice", m.ID, m.ToolCallID)
			}
			calls[m.ToolCallID] = true
		} else if m.ToolCallID != "" {
			return fmt.Errorf("%s: tool_call_id on a %s message", m.ID, m.Role)
		}
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return fmt.Errorf("%s: empty message", m.ID)
		}
	}
	for id, answered := range calls {
		if !answered {
			return fmt.Errorf("tool call %s is never answered", id)
		}
	}
	return nil
}

// validateFacts checks a facts sidecar against its conversation: every
// fact complete, stated in messages of the first 20% of the conversation,
// which hold every literal it must keep.
func validateFacts(msgs []message, facts []fact) error {
	if len(facts) < minFacts || len(facts) > maxFacts {
		return fmt.Errorf("%d facts, want %d..%d", len(facts), minFacts, maxFacts)
	}
	index := indexByID(msgs)
	early := len(msgs) / 5
	for _, f := range facts {
		if f.Fact == "" || f.Query == "" || len(f.MustContain) == 0 || len(f.MessageIDs) == 0 {
			return fmt.Errorf("fact %q: incomplete", f.Fact)
		}
		var text strings.Builder
		for _, id := range f.MessageIDs {
			i, ok := index[id]
			if !ok {
				return fmt.Errorf("fact %q: unknown message %s", f.Fact, id)
			}
			if i >= early {
				return fmt.Errorf("fact %q: message %s is #%d, not in the first 20%% (< %d)", f.Fact, id, i, early)
			}
			text.WriteString(msgs[i].Content)
			text.WriteByte('\n')
		}
		for _, s := range f.MustContain {
			if !strings.Contains(text.String(), s) {
				return fmt.Errorf("fact %q: %q is not in messages %v", f.Fact, s, f.MessageIDs)
			}
		}
	}
	return nil
}

func indexByID(msgs []message) map[string]int {
	index := make(map[string]int, len(msgs))
	for i := range msgs {
		index[msgs[i].ID] = i
	}
	return index
}

// readConversation reads a conversation and its sidecar (the file of the
// same name ending in suffix instead of .json) into sidecar, and returns
// the messages and the conversation file's size.
func readConversation(t *testing.T, path, suffix string, sidecar any) ([]message, int) {
	t.Helper()
	var msgs []message
	b, err := readStrict(path, &msgs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readStrict(strings.TrimSuffix(path, ".json")+suffix, sidecar); err != nil {
		t.Fatal(err)
	}
	return msgs, len(b)
}

// readSample reads a sample conversation and its facts.
func readSample(t *testing.T, path string) ([]message, []fact, int) {
	t.Helper()
	var facts []fact
	msgs, size := readConversation(t, path, ".facts.json", &facts)
	return msgs, facts, size
}

// TestSampleConversations holds every file of testdata/conversations to
// its README.
func TestSampleConversations(t *testing.T) {
	for _, path := range conversationFiles(t, conversationsDir) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			msgs, facts, size := readSample(t, path)
			if size > maxFileBytes {
				t.Errorf("%d bytes, over %d", size, maxFileBytes)
			}
			if err := validateMessages(msgs, sampleMinMessages, sampleMaxMessages); err != nil {
				t.Error(err)
			}
			if err := validateFacts(msgs, facts); err != nil {
				t.Error(err)
			}
		})
	}
}
