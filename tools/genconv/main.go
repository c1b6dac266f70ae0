// Command genconv writes the sample conversations of testdata/conversations:
// long, realistic agent sessions in clipfold's native Message shape, each
// with a sidecar of facts that a good compaction must keep findable; and
// the fidelity benchmark's conversations of testdata/fidelity, each with a
// sidecar of questions (fidelity.go, testdata/fidelity/README.md).
//
// Writing hundreds of messages by hand is impractical and a hand-written
// file cannot be regenerated when the shape changes, so the sessions are
// generated: a scripted storyline (the planted facts, stated early so they
// end up in the compressed part of the history) interleaved with
// templated, randomly varied work — tool calls and their outputs, chatter,
// acknowledgements — from a seeded PRNG of our own (splitmix64), so the
// output is byte-for-byte the same on every run and every Go version.
//
// Usage (from the repository root):
//
//	go run ./tools/genconv            # writes testdata/conversations/*.json and testdata/fidelity/*.json
//	go run ./tools/genconv -check     # regenerates in memory and fails if the files differ
//	go run ./tools/genconv -out DIR   # writes the sample conversations elsewhere (-fidelity-out: the others)
//	go run ./tools/genconv -overlap   # the words each fidelity question shares with its evidence
//
// Every generated conversation is validated before it is written: ids
// unique, timestamps strictly increasing, roles valid, every tool message
// answering a tool call of an earlier assistant message, the size and
// message count in range, and every fact's literals present in the
// messages it names, all of them in the first 20% of the conversation.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "testdata/conversations", "directory the sample conversations are written to")
	fidOut := flag.String("fidelity-out", "testdata/fidelity", "directory the fidelity benchmark's conversations and questions are written to")
	check := flag.Bool("check", false, "do not write: fail if the files on disk differ from a fresh generation")
	overlap := flag.Bool("overlap", false, "print the words each fidelity question shares with its evidence (a writing aid) and exit")
	flag.Parse()
	if *overlap {
		overlapReport(os.Stdout)
		return
	}
	files, err := generateAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "genconv:", err)
		os.Exit(1)
	}
	dirs := map[string]string{kindConversations: *out, kindFidelity: *fidOut}
	if *check {
		stale := false
		for _, f := range files {
			old, err := os.ReadFile(filepath.Join(dirs[f.kind], f.name))
			if err != nil || !bytes.Equal(old, f.data) {
				fmt.Fprintf(os.Stderr, "genconv: %s is stale; run go run ./tools/genconv\n", f.name)
				stale = true
			}
		}
		if stale {
			os.Exit(1)
		}
		return
	}
	for _, f := range files {
		dir := dirs[f.kind]
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genconv:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genconv:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s (%d bytes)\n", filepath.Join(dir, f.name), len(f.data))
	}
}

type file struct {
	kind string // kindConversations or kindFidelity: which directory it goes to
	name string
	data []byte
}

// The two sets of files the generator writes.
const (
	kindConversations = "conversations" // testdata/conversations
	kindFidelity      = "fidelity"      // testdata/fidelity
)

// scenario is one conversation: its file name and the function that
// writes its storyline into a generator.
type scenario struct {
	name  string
	seed  uint64
	write func(g *gen)
}

var scenarios = []scenario{
	{"debugging-session", 0x5eed_0001, writeDebugging},
	{"planning-discussion", 0x5eed_0002, writePlanning},
	{"support-chat", 0x5eed_0003, writeSupport},
}

// generateAll builds and validates every scenario's conversation and facts
// files, in a fixed order.
func generateAll() ([]file, error) {
	var files []file
	for _, sc := range scenarios {
		g := newGen(sc.seed)
		sc.write(g)
		if err := validate(g.msgs, g.facts); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		conv, err := encodeMessages(g.msgs)
		if err != nil {
			return nil, err
		}
		if len(conv) > maxFileBytes {
			return nil, fmt.Errorf("%s: %d bytes, over the %d limit", sc.name, len(conv), maxFileBytes)
		}
		facts, err := encodeIndented(g.facts)
		if err != nil {
			return nil, err
		}
		files = append(files, file{kindConversations, sc.name + ".json", conv}, file{kindConversations, sc.name + ".facts.json", facts})
	}
	fid, err := generateFidelity()
	if err != nil {
		return nil, err
	}
	return append(files, fid...), nil
}

const (
	maxFileBytes = 1_500_000
	minMessages  = 300
	maxMessages  = 1500
	minFacts     = 8
	maxFacts     = 15
)

// ---- wire shapes ----------------------------------------------------------

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// message is SPEC §2's Message, fields in the order the SPEC shows them.
type message struct {
	ID             string     `json:"id"`
	ConversationID string     `json:"conversation_id"`
	Role           string     `json:"role"`
	Content        string     `json:"content"`
	ToolCalls      []toolCall `json:"tool_calls,omitempty"`
	ToolCallID     string     `json:"tool_call_id,omitempty"`
	CreatedAt      string     `json:"created_at"`
}

// fact is one entry of a .facts.json sidecar.
type fact struct {
	Fact        string   `json:"fact"`
	Query       string   `json:"query"`
	MustContain []string `json:"must_contain"`
	MessageIDs  []string `json:"message_ids"`
}

// encodeMessages writes one message per line: small diffs when the
// generator changes, and still a plain JSON array.
func encodeMessages(msgs []message) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i := range msgs {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&msgs[i]); err != nil {
			return nil, err
		}
		b.Write(bytes.TrimRight(line.Bytes(), "\n"))
		if i < len(msgs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}

func encodeIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ---- validation -------------------------------------------------------------

// validate checks what the README promises about every file.
func validate(msgs []message, facts []fact) error {
	if err := validateMessages(msgs, minMessages, maxMessages); err != nil {
		return err
	}
	return validateFacts(msgs, facts)
}

// validateMessages checks the shape of a conversation: its length, the
// system message first, unique ids, valid roles, strictly increasing
// timestamps, and tool calls answered exactly once by later tool messages.
func validateMessages(msgs []message, minMsgs, maxMsgs int) error {
	if len(msgs) < minMsgs || len(msgs) > maxMsgs {
		return fmt.Errorf("%d messages, want %d..%d", len(msgs), minMsgs, maxMsgs)
	}
	if msgs[0].Role != "system" {
		return fmt.Errorf("first message is %q, want the system instructions", msgs[0].Role)
	}
	ids := make(map[string]int, len(msgs))
	calls := map[string]bool{} // tool call id → answered
	var prev time.Time
	for i := range msgs {
		m := &msgs[i]
		if m.ID == "" {
			return fmt.Errorf("message %d: empty id", i)
		}
		if _, dup := ids[m.ID]; dup {
			return fmt.Errorf("message %d: duplicate id %s", i, m.ID)
		}
		ids[m.ID] = i
		switch m.Role {
		case "user", "assistant", "system", "tool":
		default:
			return fmt.Errorf("%s: invalid role %q", m.ID, m.Role)
		}
		t, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
		if err != nil {
			return fmt.Errorf("%s: created_at: %w", m.ID, err)
		}
		if i > 0 && !t.After(prev) {
			return fmt.Errorf("%s: created_at %s not after the previous message's", m.ID, m.CreatedAt)
		}
		prev = t
		if len(m.ToolCalls) > 0 {
			if m.Role != "assistant" {
				return fmt.Errorf("%s: tool calls on a %s message", m.ID, m.Role)
			}
			for _, c := range m.ToolCalls {
				if _, dup := calls[c.ID]; dup || !strings.HasPrefix(c.ID, "call_") {
					return fmt.Errorf("%s: bad or duplicate tool call id %q", m.ID, c.ID)
				}
				if !json.Valid([]byte(c.Function.Arguments)) {
					return fmt.Errorf("%s: arguments of %s are not JSON", m.ID, c.ID)
				}
				calls[c.ID] = false
			}
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

// validateFacts checks a facts sidecar against its conversation.
func validateFacts(msgs []message, facts []fact) error {
	ids := make(map[string]int, len(msgs))
	for i := range msgs {
		ids[msgs[i].ID] = i
	}
	if len(facts) < minFacts || len(facts) > maxFacts {
		return fmt.Errorf("%d facts, want %d..%d", len(facts), minFacts, maxFacts)
	}
	early := len(msgs) / 5
	for _, f := range facts {
		if f.Fact == "" || f.Query == "" || len(f.MustContain) == 0 || len(f.MessageIDs) == 0 {
			return fmt.Errorf("fact %q: incomplete", f.Fact)
		}
		var text strings.Builder
		for _, id := range f.MessageIDs {
			i, ok := ids[id]
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
