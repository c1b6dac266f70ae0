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
	if len(s.lower) > 0 && c != "" {
		score += s.KeywordBonus * float64(countKeywords(c, s))
	}
	score += math.Min(float64(utf8.RuneCountInString(c))/100*s.ContentLengthWeight, 3.0)
	return score
}

// countKeywords counts how many of the lower-cased keywords occur in c,
// case-insensitively. ASCII content (the common case) is searched in one
// pass without allocating: at each byte only the keywords starting with
// that (lower-cased) byte are compared, and the scan stops once every
// keyword has been found.
func countKeywords(c string, s *Scoring) int {
	if s.nonASCIIKeywords || !isASCII(c) {
		lc := strings.ToLower(c)
		n := 0
		for _, k := range s.lower {
			if strings.Contains(lc, k) {
				n++
			}
		}
		return n
	}
	var found uint64
	n, want := 0, len(s.lower)
	for i := 0; i < len(c); i++ {
		cand := s.byFirst[lowerASCII(c[i])]
		for cand != 0 {
			k := bits.TrailingZeros64(cand)
			cand &= cand - 1
			if found&(1<<k) != 0 {
				continue
			}
			kw := s.lower[k]
			if len(kw) <= len(c)-i && equalFoldASCII(c[i:i+len(kw)], kw) {
				found |= 1 << k
				if n++; n == want {
					return n
				}
			}
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// equalFoldASCII reports whether s equals the lower-case k, ignoring
// ASCII case in s.
func equalFoldASCII(s, k string) bool {
	for j := 0; j < len(k); j++ {
		if lowerASCII(s[j]) != k[j] {
			return false
		}
	}
	return true
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
