package core

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultSystemPrompt is the summarizer's system prompt when the config
// sets none (seed 000, verbatim).
const DefaultSystemPrompt = `You are summarizing a conversation history to preserve essential context while compacting it. Create a concise narrative summary that maintains chronological order and preserves the causal chain of decisions.`

// DefaultDirective is the final user message of every summarization
// request (seed 000, verbatim).
const DefaultDirective = `Summarize the conversation above. Follow these priorities:

PRESERVE: Decisions made and their rationale. Tool outcomes (successes and failures). User constraints and preferences explicitly stated. Causal chains explaining why decisions were made.

CONDENSE: Repetitive exchanges into single statements. Verbose tool output into key results. Conversational filler and acknowledgements.

PRIORITIZE: Recent context over older context. Actionable information over historical detail. Unresolved questions and pending tasks.

REMOVE: Greetings and small talk. Redundant confirmations. Formatting artifacts.

Output only the summary text as a flowing narrative, not bullet points.`

// Prefixes of the messages the builders write.
const (
	PreviousSummaryPrefix = "Previous summary of conversation:\n"
	SummaryBatchPrefix    = "Summary batch:\n"
	ToolResultPrefix      = "[Tool result]: "
	ToolCallPrefix        = "[Tool call]: "
)

func systemOrDefault(p string) string {
	if p == "" {
		return DefaultSystemPrompt
	}
	return p
}

// BuildSummarizationRequest builds the request that summarizes msgs
// (seed 000, compaction-v2.AC1.1–1.5, AC4.3–4.4): the system prompt (the
// default when empty); the previous summary as one system message when
// non-empty; then each user, assistant and tool message as one message
// (RenderForSummary); system messages skipped; the directive last.
func BuildSummarizationRequest(systemPrompt, previousSummary string, msgs []Message, model string, maxTokens, maxMessageChars int) ModelRequest {
	out := make([]ModelMessage, 0, len(msgs)+2)
	if previousSummary != "" {
		out = append(out, ModelMessage{Role: RoleSystem, Content: PreviousSummaryPrefix + previousSummary})
	}
	for i := range msgs {
		if role, text, ok := RenderForSummary(&msgs[i], maxMessageChars); ok {
			out = append(out, ModelMessage{Role: role, Content: text})
		}
	}
	out = append(out, ModelMessage{Role: RoleUser, Content: DefaultDirective})
	return ModelRequest{System: systemOrDefault(systemPrompt), Messages: out, Model: model, MaxTokens: maxTokens}
}

// RenderForSummary is how the summarizer sees one message, in any shape:
// its tool results first, each "[Tool result]: " + output; then its text;
// then its tool calls, each "[Tool call]: name(arguments)"; joined with
// "\n". A tool message's content is its result. Each piece (output,
// text, "name(arguments)") is middle-truncated to maxMessageChars code
// points (0 = no limit) so one huge tool output cannot overflow the
// summarizer. Assistant messages stay assistant, user and tool messages
// are user; system messages are not rendered (ok false).
func RenderForSummary(m *Message, maxMessageChars int) (role Role, text string, ok bool) {
	switch m.Role {
	case RoleSystem, RoleInvalid:
		return 0, "", false
	case RoleAssistant:
		role = RoleAssistant
	default:
		role = RoleUser
	}
	own := m.Text()
	if !m.HasResults && !m.HasToolCalls {
		if m.Role == RoleTool {
			return role, ToolResultPrefix + ClampText(m.Content, maxMessageChars), true
		}
		return role, ClampText(own, maxMessageChars), true
	}
	return role, renderPieces(m, own, maxMessageChars), true
}

// renderPieces is RenderForSummary's text for a message with tool calls
// or results. It is a function of its own so that the plain path does
// not pay for its closure: TinyGo moves a parameter a closure captures to
// the heap on entry, an allocation per message.
func renderPieces(m *Message, own string, maxMessageChars int) string {
	var b strings.Builder
	piece := func(prefix, s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix)
		b.WriteString(ClampText(s, maxMessageChars))
	}
	if m.HasResults {
		for i := range m.ToolCalls {
			if tc := &m.ToolCalls[i]; tc.Result {
				piece(ToolResultPrefix, tc.Arguments)
			}
		}
	} else if m.Role == RoleTool {
		piece(ToolResultPrefix, m.Content)
	}
	if own != "" {
		piece("", own)
	}
	for i := range m.ToolCalls {
		if tc := &m.ToolCalls[i]; !tc.Result {
			piece(ToolCallPrefix, tc.Name+"("+tc.Arguments+")")
		}
	}
	return b.String()
}

// BuildResummarizationRequest builds the request that folds several batch
// summaries into one (compaction-v2.AC1.6): the same system prompt, one
// system message "Summary batch:\n…" per batch, the directive last.
func BuildResummarizationRequest(systemPrompt string, batchContents []string, model string, maxTokens int) ModelRequest {
	out := make([]ModelMessage, 0, len(batchContents)+1)
	for _, b := range batchContents {
		out = append(out, ModelMessage{Role: RoleSystem, Content: SummaryBatchPrefix + b})
	}
	out = append(out, ModelMessage{Role: RoleUser, Content: DefaultDirective})
	return ModelRequest{System: systemOrDefault(systemPrompt), Messages: out, Model: model, MaxTokens: maxTokens}
}

// RenderToolCalls shows tool calls to the summarizer, one
// "[Tool call]: name(arguments)" line per call.
func RenderToolCalls(calls []ToolCall) string {
	var b strings.Builder
	for i, tc := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(ToolCallPrefix)
		b.WriteString(tc.Name)
		b.WriteByte('(')
		b.WriteString(tc.Arguments)
		b.WriteByte(')')
	}
	return b.String()
}

// ClampText middle-truncates s to max code points: the first and last
// halves are kept around a "[… N characters omitted …]" marker. max ≤ 0
// means no limit.
func ClampText(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	return middleCut(s, max, func(omitted int) string { return "[… " + strconv.Itoa(omitted) + " characters omitted …]" })
}

// byteOffset returns the byte offset of the r-th code point of s.
func byteOffset(s string, r int) int {
	i := 0
	for r > 0 && i < len(s) {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
		r--
	}
	return i
}
