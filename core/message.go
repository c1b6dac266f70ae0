package core

import (
	"strings"
	"time"
)

// Role is a message's speaker. The zero value is not a valid role.
type Role uint8

const (
	RoleInvalid Role = iota
	RoleUser
	RoleAssistant
	RoleSystem
	RoleTool
)

// ParseRole maps the wire spelling to a Role; ok is false for anything else.
func ParseRole(s string) (Role, bool) {
	switch s {
	case "user":
		return RoleUser, true
	case "assistant":
		return RoleAssistant, true
	case "system":
		return RoleSystem, true
	case "tool":
		return RoleTool, true
	}
	return RoleInvalid, false
}

func (r Role) String() string {
	switch r {
	case RoleUser:
		return "user"
	case RoleAssistant:
		return "assistant"
	case RoleSystem:
		return "system"
	case RoleTool:
		return "tool"
	}
	return "invalid"
}

// ToolCall is one call an assistant message makes, reduced to what the
// summarizer needs to see: the call's id, the function name and its
// arguments as text (usually a JSON object).
//
// In the message shapes that carry tool results as parts of a message
// (Anthropic tool_result blocks, AI SDK tool-result parts) a result is a
// ToolCall with Result set: ID is the id of the call it answers, Name the
// tool's name when the shape gives it, Arguments the result's output as
// text. A message's calls and results are kept in the order they came in.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
	Result    bool
}

// Message is one conversation message as core sees it.
//
// Raw holds the exact bytes the message arrived as. core never reads it; it
// is carried so that every message a response returns is echoed
// byte-for-byte, with fields core does not know about kept.
//
// The one-byte fields come last, together: 144 bytes a message instead of
// 160 with them between the others (a 10k-message split holds all of them
// at once; the plug-in's memory target has little room).
type Message struct {
	ID             string
	ConversationID string
	// Content is the text: a string content as is, or the text parts of a
	// content-part array joined with "\n". When the message carries tool
	// results as parts (HasResults), their outputs come first, then the
	// text parts, all joined with "\n" (see Text).
	Content string
	// ToolCalls are the message's tool calls and, in the shapes that
	// carry them as parts, its tool results (ToolCall.Result).
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers (OpenAI Chat's
	// tool_call_id, LangChain's, a Responses function_call_output's
	// call_id): the message's content is that result's output.
	ToolCallID string
	CreatedAt  time.Time
	Raw        []byte

	// Role is the message's role as clipfold reads it, whatever the
	// shape spells: a message made only of tool results is RoleTool (an
	// Anthropic user turn of tool_result blocks, for example), a
	// developer message RoleSystem, an Anthropic clip-archive (a first
	// user turn starting with ClipArchivePrefix) RoleSystem.
	Role Role
	// HasToolCalls: the message makes at least one tool call
	// (docs/spec.md#message: tool_calls present and non-null/non-empty, or
	// call parts).
	HasToolCalls bool
	// HasResults: ToolCalls holds at least one tool result.
	HasResults   bool
	HasCreatedAt bool
	// Pinned is the message's own "pinned": true. See IsPinned for the
	// effective rule, which also pins system messages.
	Pinned bool
	// JoinNext: the next message belongs to this message's tool unit (an
	// OpenAI Responses reasoning item travels with the item after it).
	JoinNext bool
	// Shapes are the message shapes this message fits (0: not known,
	// any). The decoder sets it; see Shape.
	Shapes Shape
	// Media is how many image, document, file and audio parts the
	// message carries (its own and inside its tool results), up to 255
	// (255 images are over any window): each counts image_tokens
	// (MessageTokens). Their placeholders stay in Content.
	Media uint8
}

// Text is the message's own text: Content without the tool-result
// outputs it starts with. A tool message's Text is "" (its Content is
// its result).
func (m *Message) Text() string {
	if m.Role == RoleTool && !m.HasResults {
		return ""
	}
	if !m.HasResults {
		return m.Content
	}
	off := 0
	for i := range m.ToolCalls {
		if tc := &m.ToolCalls[i]; tc.Result {
			off += len(tc.Arguments) + 1
		}
	}
	if off >= len(m.Content) {
		return ""
	}
	return m.Content[off:]
}

// MessageRunes is what one message counts for the token estimate, in
// code points: its Content (text and tool outputs) plus each tool call's
// name and arguments.
func MessageRunes(m *Message) int {
	n := runeCount(m.Content)
	if len(m.ToolCalls) > 0 {
		for i := range m.ToolCalls {
			if tc := &m.ToolCalls[i]; !tc.Result {
				n += runeCount(tc.Name) + runeCount(tc.Arguments)
			}
		}
	}
	return n
}

// ClipArchivePrefix starts the content of every clip-archive message.
const ClipArchivePrefix = "[Context Summary"

// IsClipArchive reports whether m is a clip-archive written by a previous
// compaction: a system message whose content starts with ClipArchivePrefix.
func IsClipArchive(m *Message) bool {
	return m.Role == RoleSystem && strings.HasPrefix(m.Content, ClipArchivePrefix)
}

// MessageSearchText is the text a store indexes for m once it is in
// recall storage: its text (with the outputs of the tool results it
// carries), then each tool call's name and arguments on a line of its
// own (a tool result's text is its content). The plug-in renders it
// because it knows every message shape; hosts only store it.
func MessageSearchText(m *Message) string {
	if len(m.ToolCalls) == 0 || (m.HasResults && !m.HasToolCalls) {
		return m.Content
	}
	n := len(m.Content)
	for i := range m.ToolCalls {
		n += len(m.ToolCalls[i].Name) + len(m.ToolCalls[i].Arguments) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, m.Content...)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		if tc.Result || (tc.Name == "" && tc.Arguments == "") {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, tc.Name...)
		if tc.Name != "" && tc.Arguments != "" {
			b = append(b, ' ')
		}
		b = append(b, tc.Arguments...)
	}
	return string(b)
}

// IsPinned reports whether m must be kept verbatim: it says so itself, or
// it is a system message other than a clip-archive and pinSystem is on.
// Instructions must never silently disappear into a summary.
func IsPinned(m *Message, pinSystem bool) bool {
	if m.Pinned {
		return true
	}
	return pinSystem && m.Role == RoleSystem && !IsClipArchive(m)
}

// TimeFormat is how clipfold prints every instant: UTC, milliseconds, Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime prints t in TimeFormat.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeFormat)
}

// ParseTime reads an RFC 3339 instant (fractional seconds optional).
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseUTC(s); ok {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
