package core

import (
	"math"
	"math/bits"
	"strings"
)

// Score is the importance of one message (seed 001): the role weight (a
// tool result weighs as a user message) times recencyDecay^(total−1−index),
// plus questionBonus if the content has a '?', toolCallBonus if the
// message has tool calls, keywordBonus per distinct keyword it contains
// (case-insensitive), plus min(chars/100 × contentLengthWeight, 3).
// index and total place the message among the messages being scored;
// characters are Unicode code points.
func Score(m *Message, index, total int, s *Scoring) float64 {
	var w float64
	switch m.Role {
	case RoleSystem:
		w = s.RoleWeightSystem
	case RoleUser, RoleTool:
		w = s.RoleWeightUser
	case RoleAssistant:
		w = s.RoleWeightAssistant
	}
	score := w * math.Pow(s.RecencyDecay, float64(total-1-index))
	question, keywords, runes := s.contentFacts(m.Content)
	if question {
		score += s.QuestionBonus
	}
	if m.HasToolCalls {
		score += s.ToolCallBonus
	}
	score += s.KeywordBonus * float64(keywords)
	score += math.Min(float64(runes)/100*s.ContentLengthWeight, 3.0)
	return score
}

// contentFacts returns whether c has a '?', how many of the keywords
// occur in it (case-insensitively) and its length in code points. With
// the keyword automaton (ASCII keywords, the common case) that is one
// pass over c, plus a rune count when c is not ASCII. Text with U+0130
// or U+212A, the only non-ASCII runes strings.ToLower maps to ASCII, and
// non-ASCII keyword lists are searched the slow way.
func (s *Scoring) contentFacts(c string) (question bool, keywords, runes int) {
	if s.match != nil {
		found, ascii := s.match.scan(c)
		question = found&bitQuestion != 0
		if ascii {
			return question, bits.OnesCount64(found & keywordBits), len(c)
		}
		if found&bitToASCII == 0 {
			return question, bits.OnesCount64(found & keywordBits), runeCount(c)
		}
	} else {
		question = strings.IndexByte(c, '?') >= 0
	}
	if len(s.lower) > 0 && c != "" {
		keywords = countKeywordsSlow(c, s.lower)
	}
	return question, keywords, runeCount(c)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
