package core

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Replaced messages (docs/spec.md#counting-tokens-and-the-window): a kept
// message whose tool results are cleared, or which is middle-truncated,
// keeps its place in the history, its role and its pairing with its tool
// call; only the text changes. Its original goes to recall storage in the
// same commit, under the message's id, which the new text names.

// Edit says how one message is replaced.
type Edit struct {
	// Clear[i], when not "", is the line that replaces the output of the
	// message's i-th tool result (in ResultOutputs order).
	Clear []string
	// Truncate middle-truncates every text and tool output of the
	// message longer than Cap code points to Cap, around a marker naming
	// RecallID (TruncateText). Cleared outputs are not truncated.
	Truncate bool
	Cap      int
	// RecallID is the id the original is kept under in recall storage:
	// the message's id.
	RecallID string
}

// Cleared is how many tool results e clears.
func (e *Edit) Cleared() int {
	n := 0
	for _, l := range e.Clear {
		if l != "" {
			n++
		}
	}
	return n
}

// Rewriter renders a replaced message in its shape. The plug-in's api
// layer implements it: it knows every message shape.
type Rewriter interface {
	// Rewrite returns m with e applied, as the decoder reads the
	// rewritten JSON: Raw is m's JSON with the texts and tool outputs
	// replaced and every other member as it was (its own id included),
	// Content and ToolCalls follow, and ID is m's own id when its JSON
	// has one, else the derived id of the new message in conversation
	// conv. ok is false when m cannot be rewritten so (a shape whose
	// output is not text, or the result would not pair as m did).
	Rewrite(conv string, m *Message, e *Edit) (p Message, ok bool)
}

// ResultOutputs are the outputs of m's tool results, in order: those of
// the results it carries as parts (ToolCall.Result), or for a tool
// message its content.
func ResultOutputs(m *Message) []string {
	parts := resultParts(m)
	out := make([]string, len(parts))
	for i := range parts {
		out[i] = parts[i].Arguments
	}
	return out
}

// resultParts are m's tool results, in ResultOutputs order, as ToolCalls
// with Result set: ID the call answered, Name when the shape gives it,
// Arguments the output.
func resultParts(m *Message) []ToolCall {
	if m.HasResults {
		var out []ToolCall
		for i := range m.ToolCalls {
			if tc := &m.ToolCalls[i]; tc.Result {
				out = append(out, *tc)
			}
		}
		return out
	}
	if m.Role == RoleTool {
		return []ToolCall{{ID: m.ToolCallID, Arguments: m.Content, Result: true}}
	}
	return nil
}

// RecallMarker is in every text clipfold writes in place of what it
// cleared or cut: what follows it is the recall id of the original, in
// quotes.
const RecallMarker = "in recall storage as "

// ClearedPrefix starts the line that replaces a cleared tool result.
const ClearedPrefix = "[tool result cleared: "

// maxArgsRunes is how much of a call's arguments a cleared line shows.
const maxArgsRunes = 100

// ClearedLine is the line that replaces a cleared tool result's output:
// the tool's name, its arguments (shortened, on one line) and the id of
// the message whose original is in recall storage, e.g.
//
//	[tool result cleared: get_order {"order_id":4471}; full output in recall storage as "m12" (memory_read)]
func ClearedLine(name, args, recallID string) string {
	if name == "" {
		name = "tool"
	}
	args = oneLine(args, maxArgsRunes)
	var b strings.Builder
	b.Grow(len(ClearedPrefix) + len(name) + len(args) + len(recallID) + 64)
	b.WriteString(ClearedPrefix)
	b.WriteString(name)
	if args != "" {
		b.WriteByte(' ')
		b.WriteString(args)
	}
	b.WriteString("; full output ")
	b.WriteString(RecallMarker)
	b.WriteString(strconv.Quote(recallID))
	b.WriteString(" (memory_read)]")
	return b.String()
}

// oneLine is s with every run of white space one space, at most max code
// points (cut with "…").
func oneLine(s string, max int) string {
	var b strings.Builder
	n, space := 0, false
	for _, r := range strings.TrimSpace(s) {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			space = true
			continue
		}
		if n == max {
			b.WriteString("…")
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
			if n == max {
				b.WriteString("…")
				return b.String()
			}
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// TruncateText middle-truncates s to max code points (max ≥ 0): the
// first and last halves are kept around a marker that says how much was
// cut and where the whole text is, e.g.
//
//	[… 48210 characters omitted; the full text is in recall storage as "m12" (memory_read) …]
//
// A text of at most max code points is returned as it is.
func TruncateText(s string, max int, recallID string) string {
	return middleCut(s, max, func(omitted int) string {
		return "\n[… " + strconv.Itoa(omitted) + " characters omitted; the full text is " + RecallMarker +
			strconv.Quote(recallID) + " (memory_read) …]\n"
	})
}

// middleCut keeps the first and last halves of max code points of s
// around marker(the number of code points cut); s as it is when it has
// no more than max.
func middleCut(s string, max int, marker func(omitted int) string) string {
	n := runeCount(s)
	if n <= max {
		return s
	}
	head := max / 2
	tail := max - head
	return s[:byteOffset(s, head)] + marker(n-max) + s[byteOffset(s, n-tail):]
}

// IsReplacement reports whether m's text is one clipfold wrote in place
// of an original it keeps in recall storage (a cleared tool result, a
// truncation marker): such a message is not indexed again when it is
// removed (its original is).
func IsReplacement(m *Message) bool {
	return strings.Contains(m.Content, RecallMarker) &&
		(strings.Contains(m.Content, ClearedPrefix) || strings.Contains(m.Content, " characters omitted; the full text is "))
}

// ReplaceMessage is one message a store-owned commit replaces in place
// (docs/spec.md#compaction_commit, replace_messages): the message ID moves to
// recall storage (indexed by the commit's search text for it), and NewID
// (ID itself when the message has its own id) takes its place in the
// active history, at the same position and time, with this role, text
// and exact JSON.
type ReplaceMessage struct {
	ID      string
	NewID   string
	Role    Role
	Content string
	Raw     []byte
}

// Replacement records (a caller-owned history).
//
// A caller keeps its messages and may send the originals again on every
// turn; the store holds none of them. So a caller-owned commit that
// replaces messages also writes an archival block recording each
// replacement: the message's id, the digest of its content (so only that
// very message is replaced, never one that merely reuses the id, and
// never the replacement itself), and the edit. Every later compress
// lists these records and re-renders the replacements, which are
// deterministic, into its view of the caller's list.

// ReplacedLabelPrefix is the label prefix of a conversation's
// replacement records.
func ReplacedLabelPrefix(conversationID string) string {
	return "compaction-replaced-" + conversationID + "-"
}

// ReplacedRecord is one replacement a record block holds.
type ReplacedRecord struct {
	ID     string
	Digest string // ContentDigest of the message replaced
	Edit   Edit
}

// ContentDigest is the hex digest of m's normalized content in
// conversation conv (the digest derived ids start from).
func ContentDigest(conv string, m *Message) string {
	d := contentDigest(conv, m)
	return hex.EncodeToString(d[:])
}

// FormatReplacedBlock is a replacement record's archived content: one
// JSON line and "\n" (an empty body: the block is never a search hit).
func FormatReplacedBlock(conversationID, operationID string, recs []ReplacedRecord) string {
	var w jsonWriter
	w.raw(`{"conversation_id":`)
	w.str(conversationID)
	w.raw(`,"operation_id":`)
	w.str(operationID)
	w.raw(`,"replaced":[`)
	for i := range recs {
		r := &recs[i]
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"id":`)
		w.str(r.ID)
		w.raw(`,"digest":`)
		w.str(r.Digest)
		w.raw(`,"clear":[`)
		for j, l := range r.Edit.Clear {
			if j > 0 {
				w.raw(",")
			}
			w.str(l)
		}
		w.raw(`],"cap":`)
		if r.Edit.Truncate {
			w.int(r.Edit.Cap)
		} else {
			w.raw("null")
		}
		w.raw("}")
	}
	w.raw("]}\n")
	return string(w.b)
}

// ParseReplacedBlock reads a replacement record of conversation
// conversationID; ok is false for anything else.
func ParseReplacedBlock(conversationID, content string) (recs []ReplacedRecord, ok bool) {
	line, _, _ := strings.Cut(content, "\n")
	if !gjson.Valid(line) {
		return nil, false
	}
	r := gjson.Parse(line)
	if r.Get("conversation_id").String() != conversationID || !r.Get("replaced").IsArray() {
		return nil, false
	}
	ok = true
	r.Get("replaced").ForEach(func(_, v gjson.Result) bool {
		rec := ReplacedRecord{ID: v.Get("id").String(), Digest: v.Get("digest").String()}
		capv := v.Get("cap")
		if rec.ID == "" || rec.Digest == "" || (capv.Type != gjson.Null && (capv.Type != gjson.Number || capv.Int() < 0 || capv.Int() > MaxInt)) {
			ok = false
			return false
		}
		rec.Edit = Edit{RecallID: rec.ID}
		if capv.Type == gjson.Number {
			rec.Edit.Truncate, rec.Edit.Cap = true, int(capv.Int())
		}
		v.Get("clear").ForEach(func(_, l gjson.Result) bool {
			rec.Edit.Clear = append(rec.Edit.Clear, l.String())
			return true
		})
		recs = append(recs, rec)
		return true
	})
	if !ok {
		return nil, false
	}
	return recs, true
}
