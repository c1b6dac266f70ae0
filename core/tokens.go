package core

// EstimateTokens is clipfold's token estimate: ⌈code points / 4⌉.
func EstimateTokens(text string) int {
	return ceilDiv4(runeCount(text))
}

// EstimateMessagesTokens is one ceiling over everything the messages
// count (MessageRunes: text, tool outputs, tool calls' names and
// arguments), concatenated: not a sum of per-message ceilings.
func EstimateMessagesTokens(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += MessageRunes(&msgs[i])
	}
	return ceilDiv4(n)
}

func ceilDiv4(n int) int { return (n + 3) / 4 }

// messageTokens is the estimate of one message alone, used to cut chunks
// by max_chunk_tokens.
func messageTokens(m *Message) int { return ceilDiv4(MessageRunes(m)) }

// ShouldCompact reports whether the history's estimate is over
// context_budget × model_max_tokens (seed AC1.1), with both numbers.
func ShouldCompact(msgs []Message, c *Config) (due bool, tokens, limit int) {
	tokens = EstimateMessagesTokens(msgs)
	limit = int(c.ContextBudget * float64(c.ModelMaxTokens))
	return tokens > limit, tokens, limit
}
