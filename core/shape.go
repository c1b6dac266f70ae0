package core

import "strings"

// Shape is a set of message shapes (docs/spec.md#message-shapes): the
// formats in which agents keep their messages. The
// decoder reads each message as the shapes it fits (a plain
// {"role":"user","content":"hi"} fits them all) and a call's messages
// must share one. The shape decides only how clipfold writes the one
// message it makes, the clip-archive; every message a caller sent comes
// back byte for byte.
type Shape uint8

const (
	// ShapeChat: OpenAI Chat Completions messages (clipfold's native
	// Message is one): role, content string or parts, tool_calls with
	// function {name, arguments}, tool messages with tool_call_id.
	ShapeChat Shape = 1 << iota
	// ShapeAnthropic: Anthropic Messages: content blocks text, tool_use,
	// tool_result, image, document; no system role in messages.
	ShapeAnthropic
	// ShapeResponses: OpenAI Responses input items: type message,
	// function_call, function_call_output, reasoning, …
	ShapeResponses
	// ShapeAISDK: Vercel AI SDK ModelMessage: parts text, tool-call,
	// tool-result.
	ShapeAISDK
	// ShapeLangChain: LangChain message dicts: type human/ai/system/tool,
	// tool_calls [{name, args, id}], tool_call_id.
	ShapeLangChain

	// AnyShape is every shape: what a message fits when nothing in it is
	// particular to one.
	AnyShape = ShapeChat | ShapeAnthropic | ShapeResponses | ShapeAISDK | ShapeLangChain
)

// shapeNames are the wire names of the single shapes, in bit order.
var shapeNames = [...]string{"chat", "anthropic", "responses", "ai_sdk", "langchain"}

// shapeTitles name the shapes in error messages, in bit order.
var shapeTitles = [...]string{"an OpenAI Chat message", "an Anthropic message", "an OpenAI Responses item",
	"an AI SDK message", "a LangChain message"}

// ParseShape reads a single shape's wire name (the "shape" input).
func ParseShape(s string) (Shape, bool) {
	for i, n := range shapeNames {
		if s == n {
			return Shape(1) << i, true
		}
	}
	return 0, false
}

// ShapeNames lists the wire names, for error messages.
func ShapeNames() string { return strings.Join(shapeNames[:], ", ") }

// String is the shape's wire name; a set of several is joined with "|".
func (s Shape) String() string {
	var parts []string
	for i, n := range shapeNames {
		if s&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// Describe says what a message of these shapes is, for error messages:
// "an Anthropic message", "an OpenAI Chat message or a LangChain message".
func (s Shape) Describe() string {
	var parts []string
	for i, t := range shapeTitles {
		if s&(1<<i) != 0 {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 || s == AnyShape {
		return "a message of any shape"
	}
	return strings.Join(parts, " or ")
}

// Pick is the one shape a call whose messages all fit s is written in:
// Chat when it fits (its clip-archive is also valid Responses, AI SDK and
// LangChain input), else the first of Anthropic, Responses, AI SDK,
// LangChain. 0 (nothing known) is Chat.
func (s Shape) Pick() Shape {
	if s == 0 || s&ShapeChat != 0 {
		return ShapeChat
	}
	return s & -s
}

// HistoryShape is what the decoder learned about a call's messages: the
// shape they are written in and whether they carry clipfold's own
// bookkeeping fields (created_at or conversation_id: the native
// Message, docs/spec.md#message), which decides how a Chat clip-archive is
// written.
type HistoryShape struct {
	Shape  Shape
	Native bool
}

// AppendClipArchive writes the clip-archive message in the history's
// shape, with only what the shape needs (docs/spec.md#message-shapes): Chat
// and AI SDK {"role":"system","content":…}; Anthropic, which has no system
// role in messages, a user turn {"role":"user","content":…}; Responses
// {"type":"message","role":"system","content":…}; LangChain
// {"type":"system","content":…}. A native history (its messages carry
// created_at or conversation_id, docs/spec.md#message) gets the native Message
// {id, conversation_id, role, content, created_at}: what hosts that own the
// history store.
//
// userTurn (ArchiveAsUser: what follows the clip-archive does not start
// with a user turn) writes it as a user turn in every shape instead:
// {"role":"user",…}, {"type":"message","role":"user",…},
// {"type":"human",…}, the native Message with role "user". Providers and
// gateways that want a conversation to start with a user turn (Gemini
// among them) then take the compacted history as it is.
func AppendClipArchive(b []byte, h HistoryShape, m *InsertMessage, userTurn bool) []byte {
	switch h.Shape.Pick() {
	case ShapeAnthropic:
		b = append(b, `{"role":"user","content":`...)
	case ShapeResponses:
		if userTurn {
			b = append(b, `{"type":"message","role":"user","content":`...)
		} else {
			b = append(b, `{"type":"message","role":"system","content":`...)
		}
	case ShapeLangChain:
		if userTurn {
			b = append(b, `{"type":"human","content":`...)
		} else {
			b = append(b, `{"type":"system","content":`...)
		}
	default:
		if h.Native {
			return appendNativeArchive(b, m, userTurn)
		}
		if userTurn {
			b = append(b, `{"role":"user","content":`...)
		} else {
			b = append(b, `{"role":"system","content":`...)
		}
	}
	b = AppendJSONString(b, m.Content)
	return append(b, '}')
}

// AppendInsertMessage writes the clip-archive as a native Message: the
// insert_message of a commit, and the clip-archive of a native history.
func AppendInsertMessage(b []byte, m *InsertMessage) []byte {
	return appendNativeArchive(b, m, false)
}

// appendNativeArchive writes the clip-archive as a native Message, with
// role "user" when userTurn.
func appendNativeArchive(b []byte, m *InsertMessage, userTurn bool) []byte {
	b = append(b, `{"id":`...)
	b = AppendJSONString(b, m.ID)
	b = append(b, `,"conversation_id":`...)
	b = AppendJSONString(b, m.ConversationID)
	if userTurn {
		b = append(b, `,"role":"user","content":`...)
	} else {
		b = append(b, `,"role":"system","content":`...)
	}
	b = AppendJSONString(b, m.Content)
	b = append(b, `,"created_at":`...)
	b = AppendJSONString(b, FormatTime(m.CreatedAt))
	return append(b, '}')
}

// ArchiveAsUser reports whether the clip-archive put before msgs[keep[0]],
// msgs[keep[1]], … (before all of msgs when keep is nil) goes as a user
// turn: the first of them that is not a system message is not a user turn
// (an assistant turn, a tool call or a tool result: compaction mid tool
// loop). Kept system messages (pinned) are skipped: providers take them as
// instructions, not as turns. With nothing but system messages after it,
// or a user turn first, the clip-archive stays a system message (its seed
// form).
func ArchiveAsUser(msgs []Message, keep []int) bool {
	n := len(keep)
	if keep == nil {
		n = len(msgs)
	}
	for i := 0; i < n; i++ {
		m := &msgs[i]
		if keep != nil {
			m = &msgs[keep[i]]
		}
		if m.Role == RoleSystem {
			continue
		}
		return m.Role != RoleUser || m.HasResults
	}
	return false
}

// IsArchiveTurn reports whether m reads as a clip-archive written as a user
// turn (by AppendClipArchive, in any shape): a user turn of text alone
// that is a clip-archive as BuildClipArchive writes one, its first line
// the header "[Context Summary — N messages compressed across M compaction
// cycle(s)]" and the next a batch ("[Batch ") or "## Earliest context".
// Only a history's first message is read so. The whole header is asked
// for, not the prefix a system clip-archive needs: a user who starts a
// message with "[Context Summary" is not taken for a summary.
func IsArchiveTurn(m *Message) bool {
	return m.Role == RoleUser && !m.HasToolCalls && !m.HasResults && IsArchiveTurnText(m.Content)
}

// IsArchiveTurnText reports whether s starts the way BuildClipArchive's
// text with batches does: what IsArchiveTurn asks of a user turn's text.
func IsArchiveTurnText(s string) bool {
	const head = ClipArchivePrefix + " — "
	if !strings.HasPrefix(s, head) {
		return false
	}
	s = s[len(head):]
	if s = skipDigits(s); !strings.HasPrefix(s, " messages compressed across ") {
		return false
	}
	s = skipDigits(s[len(" messages compressed across "):])
	switch {
	case strings.HasPrefix(s, " compaction cycle]\n"):
		s = s[len(" compaction cycle]\n"):]
	case strings.HasPrefix(s, " compaction cycles]\n"):
		s = s[len(" compaction cycles]\n"):]
	default:
		return false
	}
	return strings.HasPrefix(s, "[Batch ") || strings.HasPrefix(s, "## Earliest context\n")
}

// skipDigits is s without its leading ASCII digits, or "" when it has none
// (so that what follows never matches).
func skipDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return ""
	}
	return s[i:]
}

// SettleShape decides a call's shape from fits, the intersection of its
// messages' shapes, and applies what the shape implies to msgs: a first
// user turn that is a clip-archive (IsArchiveTurn) is the prior
// clip-archive, read as a system message, in every shape. A history that
// may be Anthropic, is not native and starts with such a turn is
// Anthropic: its clip-archive is then always a user turn, which an
// Anthropic caller needs and every other provider takes.
func SettleShape(msgs []Message, fits Shape) HistoryShape {
	h := HistoryShape{Shape: fits.Pick()}
	for i := range msgs {
		if msgs[i].HasCreatedAt || msgs[i].ConversationID != "" {
			h.Native = true
			break
		}
	}
	if len(msgs) > 0 && IsArchiveTurn(&msgs[0]) {
		if fits&ShapeAnthropic != 0 && !h.Native {
			h.Shape = ShapeAnthropic
		}
		msgs[0].Role = RoleSystem
	}
	return h
}
