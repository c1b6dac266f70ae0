package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clipfold/clipfold"
	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
)

// maxFileBytes is the largest conversation file the command reads: the
// plug-in parses at most api.MaxInputBytes, and the file's messages are
// one input. A larger file is refused before it is read.
const maxFileBytes = api.MaxInputBytes

// Container formats of a conversation file.
const (
	formatArray = "json"  // one JSON array of messages
	formatJSONL = "jsonl" // one message object per line
)

// conversation is a file read as messages. The messages are passed to
// the plug-in as they are, in any shape it reads (docs/spec.md#message-shapes:
// OpenAI Chat, Anthropic, OpenAI Responses, AI SDK, LangChain): the command
// converts nothing, and what it writes back (-o) is in the input's shape.
type conversation struct {
	path   string
	format string // formatArray or formatJSONL
	// msgs are the file's messages, each as the plug-in's decoder reads
	// it: id (given, or derived from its content), role, text, time, and
	// its exact JSON, which is what is stored and echoed.
	msgs []convMessage
	// conversationID is the conversation the messages are stored under.
	conversationID string
	// tools is a request body's "tools" (the tool schemas the model was
	// sent beside the messages), nil when the file has none.
	tools json.RawMessage
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
// messages in any shape the plug-in reads, or one request body holding
// "messages" (and "system", "tools"), and decodes them with the plug-in's own
// decoder. The conversation id is convID when set; else the
// conversation_id the messages carry, when they all carry the same; else
// one derived from the file name.
func readConversation(path string, stdin io.Reader, convID string) (*conversation, error) {
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	data, err := readLimited(path, name, stdin)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		line, col := lineCol(data, off)
		return nil, &inputError{path: name, line: line, col: col,
			msg: fmt.Sprintf("the file is not valid UTF-8 (byte %d is not part of a character); save it as UTF-8", off)}
	}
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
			Tools          json.RawMessage   `json:"tools"`
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
		if t := bytes.TrimSpace(wrapper.Tools); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
			if t[0] != '[' {
				return nil, &inputError{path: name, msg: "tools: expected an array of tool schemas, found " + describeJSON(t)}
			}
			c.tools = t
		}
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
	if err := c.decode(raws, lines, convID); err != nil {
		return nil, err
	}
	return c, nil
}

// readLimited reads path ("-": stdin, shown as name) and refuses more
// than maxFileBytes: a file by its size, before reading a byte of it;
// stdin (or a file that grows while it is read) after maxFileBytes+1.
func readLimited(path, name string, stdin io.Reader) ([]byte, error) {
	tooLarge := func(size string) error {
		return &inputError{path: name, msg: fmt.Sprintf("%s; the limit is %s bytes (64 MiB): compact the conversation in parts "+
			"(the first messages, then the rest under the same --conversation)", size, commas(maxFileBytes))}
	}
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("conversation file %s does not exist", path)
			}
			return nil, fmt.Errorf("reading the conversation: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > maxFileBytes {
			return nil, tooLarge("the file is " + commas(fi.Size()) + " bytes")
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the conversation %s: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, tooLarge("it is larger than " + commas(maxFileBytes) + " bytes")
	}
	return data, nil
}

// firstInvalidUTF8 is the offset of the first byte of data that is not
// part of a valid UTF-8 sequence (len(data) when there is none).
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
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

// systemText reads a request body's "system": a string, or blocks whose
// text parts are joined with "\n".
func systemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Text != nil && (b.Type == "" || b.Type == "text") {
			parts = append(parts, *b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// historyIndex finds "history[N]" in the plug-in decoder's error texts.
var historyIndex = regexp.MustCompile(`history\[(\d+)\]`)

// decode reads the messages with the plug-in's own decoder (ids derived
// for messages without one, in convID), so the store holds them under
// the ids compress gives them. An error names the file, and the message
// by its line (JSONL) or its number when it is about one.
func (c *conversation) decode(raws []json.RawMessage, lines []int, convID string) error {
	where := func(i int) string {
		if lines != nil && i < len(lines) {
			return fmt.Sprintf("%s:%d", c.path, lines[i])
		}
		return fmt.Sprintf("%s: message %d", c.path, i+1)
	}
	msgs, err := clipfold.DecodeHistory(convID, raws)
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			return err
		}
		// The plug-in's error names a field when it has one ("history[3].role:
		// …"), else only says what is wrong ("input is … bytes; …").
		text := ce.Msg
		if ce.Field != "" {
			text = ce.Field + ": " + ce.Msg
		}
		if m := historyIndex.FindStringSubmatchIndex(text); m != nil && m[0] == 0 {
			i, _ := strconv.Atoi(text[m[2]:m[3]])
			rest := strings.TrimPrefix(text[m[1]:], ".")
			rest = strings.TrimPrefix(rest, ": ")
			text = where(i) + ": " + rest
		} else {
			text = c.path + ": " + text
		}
		text = historyIndex.ReplaceAllStringFunc(text, func(h string) string {
			i, _ := strconv.Atoi(historyIndex.FindStringSubmatch(h)[1])
			return "message " + strconv.Itoa(i+1)
		})
		return errors.New(text)
	}
	c.msgs = make([]convMessage, len(msgs))
	for i, m := range msgs {
		c.msgs[i] = convMessage{ID: m.ID, Role: m.Role, Content: m.Content, Created: m.CreatedAt, Raw: m.Raw, ConversationID: m.ConversationID}
	}
	return nil
}

func describeJSON(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
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
