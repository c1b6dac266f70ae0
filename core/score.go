package core

import (
	"math"
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
	if len(s.lower) > 0 && c != "" {
		score += s.KeywordBonus * float64(countKeywords(c, s.lower))
	}
	score += math.Min(float64(utf8.RuneCountInString(c))/100*s.ContentLengthWeight, 3.0)
	return score
}

// countKeywords counts how many of the lower-cased keywords occur in c,
// case-insensitively. ASCII content (the common case) is searched without
// allocating a lower-cased copy.
func countKeywords(c string, lower []string) int {
	ascii := true
	for i := 0; i < len(c); i++ {
		if c[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		lc := strings.ToLower(c)
		n := 0
		for _, k := range lower {
			if strings.Contains(lc, k) {
				n++
			}
		}
		return n
	}
	n := 0
	for _, k := range lower {
		if containsFoldASCII(c, k) {
			n++
		}
	}
	return n
}

// containsFoldASCII reports whether the ASCII string s contains the
// lower-case needle k, ignoring ASCII case in s.
func containsFoldASCII(s, k string) bool {
	if len(k) == 0 {
		return true
	}
	if len(k) > len(s) {
		return false
	}
	first := k[0]
	for i := 0; i+len(k) <= len(s); i++ {
		if lowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < len(k) && lowerASCII(s[i+j]) == k[j] {
			j++
		}
		if j == len(k) {
			return true
		}
	}
	return false
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// ScoreAll scores every message by its position in msgs.
func ScoreAll(msgs []Message, s *Scoring) []float64 {
	out := make([]float64, len(msgs))
	for i := range msgs {
		out[i] = Score(&msgs[i], i, len(msgs), s)
	}
	return out
}
