package core

import "strings"

// What a store indexes for a message is the message in its exchange: a
// later question rarely repeats the words of the turn that answers it,
// but it does repeat the words of the request that turn answered ("How
// many orders did we get in February?" → "1,284 orders"), of the tool
// call a result answers ("crontab -l" → its output), and of the reply a
// statement drew ("I bought the old Volvo" → "You own a car now?"). So
// MessageSearchTextAt indexes, after the message's own text, short
// context lines: the user request that opened the turn (for any message
// but a user's) and the message that follows. This is document
// expansion. A tool result's call (its tool's name and arguments) is part
// of the result's own words, not context: an agent asks for a result by
// its call ("what did get_order 4471 return?"), and the call is what
// the result is an answer to, not a neighbour quoting it. The context starts at the first
// SearchContextSep, each further line starts with "» "; stores index it
// at half the weight of the message's own words (a neighbour that only
// quotes the evidence must not outrank it), and the snippet and the
// hit's text show it, so a hit reads as the exchange it came from.

// SearchContextSep separates a search text's own words from its context
// lines (the first of them follows it). Stores split there.
const SearchContextSep = "\n\n» "

// searchContextRunes bounds each context line, in code points (its
// head is kept): a long tool output is not indexed again with every
// neighbour.
const searchContextRunes = 500

// searchContextScan bounds how far back the turn's request and a
// result's call are looked for, in messages.
const searchContextScan = 64

// MessageSearchTextAt is what a store indexes for hist[k] once it is in
// recall storage: MessageSearchText (for a tool result, then its call on
// a line of its own), then the context lines described above. System
// messages give and get no context (instructions, clip-archives).
func MessageSearchTextAt(hist []Message, k int) string {
	m := &hist[k]
	own := MessageSearchText(m)
	if m.Role == RoleSystem {
		return own
	}
	var b strings.Builder
	b.WriteString(own)
	quoted := false
	quote := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" {
			return
		}
		if quoted {
			b.WriteString("\n» ")
		} else {
			b.WriteString(SearchContextSep)
			quoted = true
		}
		if n := byteOffset(s, searchContextRunes); n < len(s) {
			s = s[:n]
		}
		b.WriteString(strings.ReplaceAll(s, "\n", " "))
	}
	lo := max(0, k-searchContextScan)
	if m.Role == RoleTool && m.ToolCallID != "" {
	call:
		for j := k - 1; j >= lo; j-- {
			for _, tc := range hist[j].ToolCalls {
				if tc.ID == m.ToolCallID {
					if call := strings.TrimSpace(tc.Name + " " + tc.Arguments); call != "" {
						if b.Len() > 0 {
							b.WriteByte('\n')
						}
						// The call message indexes its arguments whole; a
						// long one (a file written) is not indexed again.
						b.WriteString(call[:byteOffset(call, searchContextRunes)])
					}
					break call
				}
			}
		}
	}
	if m.Role != RoleUser {
		for j := k - 1; j >= lo; j-- {
			if hist[j].Role == RoleUser {
				quote(MessageSearchText(&hist[j]))
				break
			}
		}
	}
	if k+1 < len(hist) && hist[k+1].Role != RoleSystem {
		quote(MessageSearchText(&hist[k+1]))
	}
	return b.String()
}
