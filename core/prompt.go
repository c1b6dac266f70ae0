package core

import (
	"slices"
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

// Prefixes of the messages the builders write. A tool result whose call
// is known is written ToolResultOfPrefix + call + "]: " + output, the call
// as "name(arguments)" (CallHeader), or just the tool's name when only
// that is known; otherwise ToolResultPrefix + output.
const (
	PreviousSummaryPrefix = "Previous summary of conversation:\n"
	SummaryBatchPrefix    = "Summary batch:\n"
	ToolResultPrefix      = "[Tool result]: "
	ToolResultOfPrefix    = "[Tool result of "
	ToolCallPrefix        = "[Tool call]: "
)

// ToolHeaderArgsMax is how many code points of a call's arguments a tool
// result's header shows: the call itself is rendered in full (up to
// max_message_chars) where it is made.
const ToolHeaderArgsMax = 200

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
// (RenderForSummary, each tool result naming its call: CallHeader);
// system messages skipped; the directive last.
func BuildSummarizationRequest(systemPrompt, previousSummary string, msgs []Message, model string, maxTokens, maxMessageChars int) ModelRequest {
	out := make([]ModelMessage, 0, len(msgs)+2)
	if previousSummary != "" {
		out = append(out, ModelMessage{Role: RoleSystem, Content: PreviousSummaryPrefix + previousSummary})
	}
	calls := newCallIndex(msgs)
	for i := range msgs {
		if role, text, ok := renderForSummary(&msgs[i], maxMessageChars, calls, i); ok {
			out = append(out, ModelMessage{Role: role, Content: text})
		}
	}
	out = append(out, ModelMessage{Role: RoleUser, Content: DefaultDirective})
	return ModelRequest{System: systemOrDefault(systemPrompt), Messages: out, Model: model, MaxTokens: maxTokens}
}

// RenderForSummary is how the summarizer sees one message, in any shape,
// on its own: its tool results first, each "[Tool result]: " + output;
// then its text; then its tool calls, each "[Tool call]: name(arguments)";
// joined with "\n". A tool message's content is its result. Each piece
// (output, text, "name(arguments)") is middle-truncated to
// maxMessageChars code points (0 = no limit) so one huge tool output
// cannot overflow the summarizer. Assistant messages stay assistant, user
// and tool messages are user; system messages are not rendered (ok
// false). In a summarization request, where the calls around it are
// known, each result names its call (BuildSummarizationRequest).
func RenderForSummary(m *Message, maxMessageChars int) (role Role, text string, ok bool) {
	return renderForSummary(m, maxMessageChars, nil, 0)
}

func renderForSummary(m *Message, maxMessageChars int, calls *callIndex, at int) (role Role, text string, ok bool) {
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
			return role, resultHeader(calls.find(m.ToolCallID, "", at)) + ClampText(m.Content, maxMessageChars), true
		}
		return role, ClampText(own, maxMessageChars), true
	}
	return role, renderPieces(m, own, maxMessageChars, calls, at), true
}

// resultHeader is what a tool result's output follows in a request:
// ToolResultOfPrefix + the call + "]: " when the call or its tool is
// known, else ToolResultPrefix.
func resultHeader(call *ToolCall) string {
	if call == nil {
		return ToolResultPrefix
	}
	return ToolResultOfPrefix + CallHeader(call) + "]: "
}

// CallHeader is how a tool result's header shows its call: "name(arguments)"
// with every line break in the arguments made a space and the arguments
// middle-truncated to ToolHeaderArgsMax code points, or just the name
// when only the name is known (a result that names its tool, its call
// elsewhere).
func CallHeader(call *ToolCall) string {
	if call.Result {
		return call.Name
	}
	args := call.Arguments
	if strings.ContainsAny(args, "\r\n") {
		args = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(args)
	}
	return call.Name + "(" + ClampText(args, ToolHeaderArgsMax) + ")"
}

// callIndex finds the call a tool result answers among the messages of
// one request or chunk.
type callIndex struct {
	msgs []Message
	byID map[string][]int32 // call id → positions in msgs of the messages making it
}

func newCallIndex(msgs []Message) *callIndex {
	ix := &callIndex{msgs: msgs}
	for i := range msgs {
		for j := range msgs[i].ToolCalls {
			if tc := &msgs[i].ToolCalls[j]; !tc.Result && tc.ID != "" {
				if ix.byID == nil {
					ix.byID = map[string][]int32{}
				}
				ix.byID[tc.ID] = append(ix.byID[tc.ID], int32(i))
			}
		}
	}
	return ix
}

// find returns the call with id that a result in msgs[at] answers: the
// nearest one made before it (ids may be reused), else the first made
// after; when there is none, a ToolCall with Result set and the name the
// result gives (nil when it gives none).
func (ix *callIndex) find(id, name string, at int) *ToolCall {
	if ix != nil && id != "" {
		best := int32(-1)
		if ps := ix.byID[id]; len(ps) > 0 {
			// ps is ascending: the last before at, else the first.
			k, _ := slices.BinarySearch(ps, int32(at))
			best = ps[max(k-1, 0)]
		}
		if best >= 0 {
			m := &ix.msgs[best]
			for j := len(m.ToolCalls) - 1; j >= 0; j-- {
				if tc := &m.ToolCalls[j]; !tc.Result && tc.ID == id {
					return tc
				}
			}
		}
	}
	if name != "" && ix != nil {
		return &ToolCall{Name: name, Result: true}
	}
	return nil
}

// renderPieces is RenderForSummary's text for a message with tool calls
// or results. It is a function of its own so that the plain path does
// not pay for its closure: TinyGo moves a parameter a closure captures to
// the heap on entry, an allocation per message.
func renderPieces(m *Message, own string, maxMessageChars int, calls *callIndex, at int) string {
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
				piece(resultHeader(calls.find(tc.ID, tc.Name, at)), tc.Arguments)
			}
		}
	} else if m.Role == RoleTool {
		piece(resultHeader(calls.find(m.ToolCallID, "", at)), m.Content)
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
