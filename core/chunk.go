package core

// Chunk cuts msgs[order[0]], msgs[order[1]], … into consecutive chunks of
// at most size messages, or, when maxTokens > 0, of at most maxTokens
// estimated tokens (seed AC1.2). A run of messages of one tool unit (a
// call and its results, in any shape; see unitIndex) is never cut: such a
// run goes whole into the next chunk, alone if it is larger than a chunk.
// Chunks hold indices into msgs; every index of order appears exactly
// once. size < 1 is treated as 1.
func Chunk(msgs []Message, order []int, size, maxTokens int, c *Config) [][]int {
	u := toolUnits(msgs, 0)
	return chunkUnits(msgs, order, size, maxTokens, &u, c)
}

// chunkUnits is Chunk with the history's tool units already known.
func chunkUnits(msgs []Message, order []int, size, maxTokens int, u *unitIndex, c *Config) [][]int {
	if size < 1 {
		size = 1
	}
	var chunks [][]int
	var cur []int
	curTok := 0
	for k := 0; k < len(order); {
		end := u.runEnd(order, k)
		unitTok := 0
		if maxTokens > 0 {
			for _, i := range order[k:end] {
				unitTok += MessageTokens(&msgs[i], c)
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

// runEnd is the end of the run of order starting at k whose messages
// belong to one tool unit.
func (u *unitIndex) runEnd(order []int, k int) int {
	end := k + 1
	if u.lead == nil || order[k] < u.start {
		return end
	}
	l := u.leader(order[k])
	for end < len(order) && order[end] >= u.start && u.leader(order[end]) == l {
		end++
	}
	return end
}

// Identity returns [0, 1, …, n-1]: the order of a plain message list.
func Identity(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = i
	}
	return o
}
