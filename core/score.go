package core

import (
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
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
	c := m.Content
	if strings.IndexByte(c, '?') >= 0 {
		score += s.QuestionBonus
	}
	if m.HasToolCalls {
		score += s.ToolCallBonus
	}
	keywords, runes := s.keywordsAndLength(c)
	score += s.KeywordBonus * float64(keywords)
	score += math.Min(float64(runes)/100*s.ContentLengthWeight, 3.0)
	return score
}

// keywordsAndLength returns how many of the keywords occur in c
// (case-insensitively) and c's length in code points. ASCII text, the
// common case, takes one pass of the keyword automaton, which also tells
// whether c is ASCII (then its length is len(c)). Only text with U+0130
// (İ, lower-cased to "i") or U+212A (Kelvin sign, to "k"), the only
// non-ASCII runes strings.ToLower maps to ASCII, is searched the slow way.
func (s *Scoring) keywordsAndLength(c string) (keywords, runes int) {
	if s.match != nil {
		found, ascii := s.match.scan(c)
		if ascii {
			return bits.OnesCount64(found), len(c)
		}
		// Non-ASCII text: the automaton's answer stands unless the text
		// has one of the two runes that lower-case to ASCII letters.
		if !strings.Contains(c, "\u0130") && !strings.Contains(c, "\u212a") {
			return bits.OnesCount64(found), runeCount(c)
		}
	}
	if len(s.lower) > 0 && c != "" {
		keywords = countKeywordsSlow(c, s.lower)
	}
	return keywords, runeCount(c)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ScoreAll scores every message by its position in msgs.
func ScoreAll(msgs []Message, s *Scoring) []float64 {
	out := make([]float64, len(msgs))
	for i := range msgs {
		out[i] = Score(&msgs[i], i, len(msgs), s)
	}
	return out
}
