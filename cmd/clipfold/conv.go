package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clipfold/clipfold/core"
)

// Container formats of a conversation file.
const (
	formatArray = "json"  // one JSON array of messages
	formatJSONL = "jsonl" // one message object per line
)

// conversation is a file read and converted to SPEC messages.
type conversation struct {
	path   string
	format string // formatArray or formatJSONL
	// msgs are SPEC Messages, each the exact JSON clipfold stores: the
	// input bytes when the message already had an id and created_at,
	// else the input object with the missing fields added (see convert).
	msgs []convMessage
	// conversationID is the conversation the messages are stored under.
	conversationID string
	// converted counts messages that needed conversion (OpenAI or
	// Anthropic shapes, missing id or created_at).
	converted int
}

type convMessage struct {
	ID      string
	Role    string
	Content string // text, for the store's search index
	Created time.Time
	Raw     json.RawMessage
	// ConversationID is the message's own conversation_id, "" if none.
	ConversationID string
}

// timeBase is where generated created_at values start: fixed, so the
// same file always converts to the same bytes (and goldens are stable).
var timeBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// inputError is a problem with the conversation file, located.
type inputError struct {
	path      string
	line, col int // 0 when unknown
	msg       string
}

func (e *inputError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.path, e.line, e.col, e.msg)
	}
	return e.path + ": " + e.msg
}

// readConversation reads path ("-" is stdin) as a JSON array or JSONL of
// messages in SPEC's shape, OpenAI chat shape or Anthropic Messages shape,
// and converts everything to SPEC messages. The conversation id is convID
// when set; else the conversation_id the messages carry, when they all
// carry the same; else one derived from the file name.
func readConversation(path string, stdin io.Reader, convID string) (*conversation, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("conversation file %s does not exist", path)
		}
		return nil, fmt.Errorf("reading the conversation: %w", err)
	}
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &inputError{path: name, msg: "the file is empty; expected a JSON array of messages or JSON Lines"}
	}
	c := &conversation{path: name}
	var raws []json.RawMessage
	var lines []int // line of each raw (JSONL), for messages about one message
	switch trimmed[0] {
	case '[':
		c.format = formatArray
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, jsonError(name, data, 1, err)
		}
	case '{':
		c.format = formatJSONL
		// A single object holding "messages" (a request body) is a
		// conversation too.
		var wrapper struct {
			Messages       []json.RawMessage `json:"messages"`
			System         json.RawMessage   `json:"system"`
			ConversationID string            `json:"conversation_id"`
		}
		if bytes.Count(bytes.TrimSpace(data), []byte("\n")) > 0 || !json.Valid(data) ||
			json.Unmarshal(data, &wrapper) != nil || wrapper.Messages == nil {
			raws, lines, err = splitJSONL(name, data)
			if err != nil {
				return nil, err
			}
			break
		}
		c.format = formatArray
		raws = wrapper.Messages
		if sys := systemText(wrapper.System); sys != "" {
			b, _ := json.Marshal(map[string]string{"role": "system", "content": sys})
			raws = append([]json.RawMessage{b}, raws...)
		}
	default:
		line, col := lineCol(data, len(data)-len(trimmed))
		return nil, &inputError{path: name, line: line, col: col,
			msg: fmt.Sprintf("expected a JSON array of messages or JSON Lines (one message object per line), found %q", firstRune(trimmed))}
	}
	if len(raws) == 0 {
		return nil, &inputError{path: name, msg: "no messages"}
	}
	ids := carriedConversationIDs(raws)
	switch {
	case convID != "":
		for _, id := range ids {
			if id != convID {
				return nil, &inputError{path: name, msg: fmt.Sprintf(
					"the messages belong to conversation %q, not %q: omit --conversation or pass --conversation %s", id, convID, id)}
			}
		}
	case len(ids) == 1:
		convID = ids[0]
	case len(ids) > 1:
		return nil, &inputError{path: name, msg: fmt.Sprintf(
			"the messages belong to %d conversations (%s); clipfold compacts one conversation per file", len(ids), strings.Join(ids, ", "))}
	default:
		convID = defaultConversationID(path)
	}
	c.conversationID = convID
	if err := c.convert(raws, lines, convID); err != nil {
		return nil, err
	}
	return c, nil
}

// carriedConversationIDs lists the distinct conversation_id values the
// messages carry, in order of first appearance.
func carriedConversationIDs(raws []json.RawMessage) []string {
	var ids []string
	seen := map[string]bool{}
	for _, raw := range raws {
		var m struct {
			ConversationID any `json:"conversation_id"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		if s, ok := m.ConversationID.(string); ok && s != "" && !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	return ids
}

func firstRune(b []byte) string {
	r, _ := utf8.DecodeRune(b)
	return string(r)
}

// splitJSONL reads one JSON value per non-blank line.
func splitJSONL(name string, data []byte) ([]json.RawMessage, []int, error) {
	var raws []json.RawMessage
	var lines []int
	off := 0
	for n := 1; off < len(data); n++ {
		end := bytes.IndexByte(data[off:], '\n')
		line := data[off:]
		next := len(data)
		if end >= 0 {
			line = data[off : off+end]
			next = off + end + 1
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var v json.RawMessage
			if err := json.Unmarshal(line, &v); err != nil {
				return nil, nil, jsonError(name, line, n, err)
			}
			raws = append(raws, v)
			lines = append(lines, n)
		}
		off = next
	}
	return raws, lines, nil
}

// jsonError locates an encoding/json error as line:col. data is the text
// that was parsed, starting on line firstLine.
func jsonError(name string, data []byte, firstLine int, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset)
		if off > 0 {
			off-- // Offset is just past the offending byte
		}
		line, col := lineCol(data, off)
		msg := "invalid JSON: " + se.Error()
		if se.Error() == "unexpected end of JSON input" {
			line, col = lineCol(data, len(bytes.TrimRight(data, " \t\r\n")))
			msg = "invalid JSON: the file ends before the JSON does (a missing ']' or '}'?)"
		}
		return &inputError{path: name, line: line + firstLine - 1, col: col, msg: msg}
	case errors.As(err, &te):
		off := int(te.Offset)
		line, col := lineCol(data, off)
		what := "a message object"
		if firstLine == 1 && te.Offset <= 1 {
			what = "a JSON array of messages"
		}
		return &inputError{path: name, line: line + firstLine - 1, col: col,
			msg: fmt.Sprintf("expected %s, found a JSON %s", what, te.Value)}
	}
	return &inputError{path: name, msg: "invalid JSON: " + err.Error()}
}

// lineCol turns a byte offset into a 1-based line and a 1-based column
// counted in characters.
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// field is one member of a JSON object, in input order.
type field struct {
	key string
	val json.RawMessage
}

// objectFields reads a JSON object's members in order.
func objectFields(raw []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{k, v})
	}
	return out, nil
}

func get(fs []field, key string) (json.RawMessage, bool) {
	for _, f := range fs {
		if f.key == key {
			return f.val, true
		}
	}
	return nil, false
}

// buildObject writes fields as one compact JSON object, HTML unescaped.
func buildObject(fs []field) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// marshal is json.Marshal without HTML escaping and trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func str(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// block is one Anthropic content block (or OpenAI content part).
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// contentBlocks reads an array content as blocks; ok is false for any
// other content.
func contentBlocks(raw json.RawMessage) ([]block, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return nil, false
	}
	var bs []block
	if json.Unmarshal(t, &bs) != nil {
		return nil, false
	}
	return bs, true
}

// textOf is the text of a content: a string, or text parts joined by
// "\n" (SPEC §2).
func textOf(raw json.RawMessage) string {
	if s, ok := str(raw); ok {
		return s
	}
	bs, ok := contentBlocks(raw)
	if !ok {
		return ""
	}
	var parts []string
	for _, b := range bs {
		switch {
		case b.Text != nil && (b.Type == "" || b.Type == "text"):
			parts = append(parts, *b.Text)
		case b.Type == "tool_result":
			parts = append(parts, textOf(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

// systemText reads an Anthropic request's "system": a string or blocks.
func systemText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return textOf(raw)
}

// isAnthropic reports whether a content carries Anthropic-only blocks that
// SPEC messages express otherwise (tool_use → tool_calls, tool_result →
// tool messages, thinking → dropped).
func isAnthropic(bs []block) bool {
	for _, b := range bs {
		switch b.Type {
		case "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use":
			return true
		}
	}
	return false
}

// convert turns raw input messages into SPEC messages.
func (c *conversation) convert(raws []json.RawMessage, lines []int, convID string) error {
	var last time.Time
	where := func(i int) string {
		if lines != nil {
			return fmt.Sprintf("%s:%d", c.path, lines[i])
		}
		return fmt.Sprintf("%s: message %d", c.path, i+1)
	}
	for i, raw := range raws {
		fs, err := objectFields(raw)
		if err != nil {
			return fmt.Errorf("%s: expected a message object, found %s", where(i), describeJSON(raw))
		}
		roleRaw, ok := get(fs, "role")
		role, isStr := str(roleRaw)
		if !ok || !isStr {
			return fmt.Errorf("%s: the message has no \"role\" (expected user, assistant, system or tool)", where(i))
		}
		switch role {
		case "developer":
			role = "system" // OpenAI's newer name for system instructions
		case "function":
			role = "tool" // OpenAI's legacy function results
		case "user", "assistant", "system", "tool":
		default:
			return fmt.Errorf("%s: role %q is not user, assistant, system or tool", where(i), role)
		}
		contentRaw, _ := get(fs, "content")
		if bs, ok := contentBlocks(contentRaw); ok && isAnthropic(bs) {
			if err := c.convertAnthropic(role, bs, convID, &last); err != nil {
				return fmt.Errorf("%s: %w", where(i), err)
			}
			continue
		}
		m := convMessage{Role: role, Content: textOf(contentRaw)}
		idRaw, hasID := get(fs, "id")
		m.ID, _ = str(idRaw)
		if cid, ok := get(fs, "conversation_id"); ok {
			m.ConversationID, _ = str(cid)
		}
		tRaw, hasTime := get(fs, "created_at")
		if ts, ok := str(tRaw); hasTime && ok {
			t, err := core.ParseTime(ts)
			if err != nil {
				return fmt.Errorf("%s: created_at %q is not an RFC 3339 time like 2026-02-28T10:00:00.000Z", where(i), ts)
			}
			m.Created = t
		}
		roleChanged := string(roleRaw) != strconv.Quote(role)
		if hasID && m.ID != "" && !m.Created.IsZero() && !roleChanged {
			m.Raw = raw // native: stored and echoed byte for byte
			if last.Before(m.Created) {
				last = m.Created
			}
			c.msgs = append(c.msgs, m)
			continue
		}
		// Add what is missing, keep everything else as it was.
		c.converted++
		var out []field
		if m.ID == "" {
			m.ID = genID(convID, len(c.msgs))
			out = append(out, field{"id", mustMarshal(m.ID)})
		}
		if m.ConversationID == "" {
			out = append(out, field{"conversation_id", mustMarshal(convID)})
		}
		for _, f := range fs {
			switch f.key {
			case "id":
				if hasID && m.ID != "" {
					if s, _ := str(f.val); s == m.ID {
						out = append(out, f)
					}
				}
				continue
			case "role":
				f.val = mustMarshal(role)
			case "created_at":
				if m.Created.IsZero() {
					continue
				}
			}
			out = append(out, f)
		}
		if m.Created.IsZero() {
			m.Created = nextTime(&last, len(c.msgs))
			out = append(out, field{"created_at", mustMarshal(core.FormatTime(m.Created))})
		} else if last.Before(m.Created) {
			last = m.Created
		}
		m.Raw = buildObject(out)
		c.msgs = append(c.msgs, m)
	}
	return nil
}

// convertAnthropic turns one Anthropic message with content blocks into
// SPEC messages: tool_use blocks become OpenAI-style tool_calls on the
// assistant message; tool_result blocks become role "tool" messages with
// tool_call_id, before the user's own text (which follows them, as in the
// original turn); thinking blocks are dropped.
func (c *conversation) convertAnthropic(role string, bs []block, convID string, last *time.Time) error {
	c.converted++
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var texts []string
	var calls []toolCall
	add := func(role, content string, extra ...field) {
		id := genID(convID, len(c.msgs))
		t := nextTime(last, len(c.msgs))
		out := []field{{"id", mustMarshal(id)}, {"conversation_id", mustMarshal(convID)}}
		out = append(out, field{"role", mustMarshal(role)}, field{"content", mustMarshal(content)})
		out = append(out, extra...)
		out = append(out, field{"created_at", mustMarshal(core.FormatTime(t))})
		c.msgs = append(c.msgs, convMessage{ID: id, Role: role, Content: content, Created: t, Raw: buildObject(out)})
	}
	for _, b := range bs {
		switch b.Type {
		case "text":
			if b.Text != nil && *b.Text != "" {
				texts = append(texts, *b.Text)
			}
		case "tool_use", "server_tool_use":
			args := "{}"
			if len(b.Input) > 0 {
				var buf bytes.Buffer
				if json.Compact(&buf, b.Input) == nil {
					args = buf.String()
				}
			}
			calls = append(calls, toolCall{ID: b.ID, Type: "function", Function: function{Name: b.Name, Arguments: args}})
		case "tool_result":
			content := textOf(b.Content)
			if b.IsError {
				content = "[error] " + content
			}
			add("tool", content, field{"tool_call_id", mustMarshal(b.ToolUseID)})
		case "image":
			texts = append(texts, "[image]")
		case "document":
			texts = append(texts, "[document]")
		}
	}
	text := strings.Join(texts, "\n")
	if len(calls) > 0 {
		add(role, text, field{"tool_calls", mustMarshal(calls)})
	} else if text != "" {
		add(role, text)
	}
	return nil
}

func nextTime(last *time.Time, i int) time.Time {
	t := timeBase.Add(time.Duration(i) * time.Second)
	if !last.IsZero() && !t.After(*last) {
		t = last.Add(time.Second)
	}
	*last = t
	return t
}

// genID names the i-th message (0-based) of a conversation whose input
// had no id: stable for a given file, so re-running on a longer version of
// the same file recognizes the messages already stored.
func genID(convID string, i int) string {
	return fmt.Sprintf("%s-%04d", convID, i+1)
}

func describeJSON(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// defaultConversationID is the file's base name without extension,
// reduced to characters that read well in labels.
func defaultConversationID(path string) string {
	if path == "-" {
		return "stdin"
	}
	base := filepath.Base(path)
	for {
		ext := filepath.Ext(base)
		if ext == "" || ext == base {
			break
		}
		base = strings.TrimSuffix(base, ext)
		if ext != ".json" && ext != ".jsonl" && ext != ".ndjson" && ext != ".gz" {
			break
		}
	}
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "conversation"
	}
	return b.String()
}

// writeHistory writes messages as a JSON array (one message per line) or
// as JSON Lines.
func writeHistory(w io.Writer, format string, msgs []json.RawMessage) error {
	var b bytes.Buffer
	if format == formatJSONL {
		for _, m := range msgs {
			if err := json.Compact(&b, m); err != nil {
				return err
			}
			b.WriteByte('\n')
		}
	} else {
		b.WriteString("[")
		for i, m := range msgs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n  ")
			if err := json.Compact(&b, m); err != nil {
				return err
			}
		}
		b.WriteString("\n]\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
