package core

// Chunk cuts msgs[order[0]], msgs[order[1]], … into consecutive chunks of
// at most size messages, or, when maxTokens > 0, of at most maxTokens
// estimated tokens (seed AC1.2). A run of a tool call followed by its
// results is never cut: such a unit goes whole into the next chunk, alone
// if it is larger than a chunk. Chunks hold indices into msgs; every
// index of order appears exactly once. size < 1 is treated as 1.
func Chunk(msgs []Message, order []int, size, maxTokens int) [][]int {
	if size < 1 {
		size = 1
	}
	var chunks [][]int
	var cur []int
	curTok := 0
	for k := 0; k < len(order); {
		// The unit starting at k: a call and the results directly after it.
		end := k + 1
		if m := &msgs[order[k]]; m.Role == RoleAssistant && m.HasToolCalls {
			for end < len(order) && answers(&msgs[order[end]], m) {
				end++
			}
		}
		unitTok := 0
		if maxTokens > 0 {
			for _, i := range order[k:end] {
				unitTok += messageTokens(&msgs[i])
			}
		}
		full := false
		if len(cur) > 0 {
			if maxTokens > 0 {
				full = curTok+unitTok > maxTokens
			} else {
				full = len(cur)+(end-k) > size
			}
		}
		if full {
			chunks = append(chunks, cur)
			cur, curTok = nil, 0
		}
		cur = append(cur, order[k:end]...)
		curTok += unitTok
		k = end
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// answers reports whether m is a tool result for one of call's tool calls
// (or carries no tool_call_id, and so answers the call it follows).
func answers(m, call *Message) bool {
	if m.Role != RoleTool {
		return false
	}
	if m.ToolCallID == "" {
		return true
	}
	for _, tc := range call.ToolCalls {
		if tc.ID == m.ToolCallID {
			return true
		}
	}
	return false
}

// Identity returns [0, 1, …, n-1]: the order of a plain message list.
func Identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}
