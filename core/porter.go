package core

// PorterStem stems one folded token as SQLite's FTS5 "porter" tokenizer
// does, so that core's query terms are the terms the index holds. That is
// Martin Porter's original algorithm with the two rules of his later
// published code (Step 2: "bli" → "ble", "logi" → "log"), run on bytes:
// every byte but a, e, i, o, u (and y after a consonant) is a consonant,
// multi-byte UTF-8 included, and tokens shorter than 3 or longer than 64
// bytes pass through unchanged. A rule needs a non-empty stem. The
// differential test in hostfuncs/store/sqlite holds it to the engine.
func PorterStem(token string) string {
	if len(token) < 3 || len(token) > porterMaxToken {
		return token
	}
	var buf [porterMaxToken + 8]byte
	b := append(buf[:0], token...)
	b = porterStep1A(b)
	if b2, removed := porterApply(b, porterStep1B); removed {
		b = b2
		if b3, ok := porterApply(b, porterStep1B2); ok {
			b = b3
		} else if c := b[len(b)-1]; len(b) >= 2 && !porterVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == b[len(b)-2] {
			b = b[:len(b)-1]
		} else if porterMEq1(b) && porterOStar(b) {
			b = append(b, 'e')
		}
	} else {
		b = b2
	}
	// Step 1C.
	if b[len(b)-1] == 'y' && porterHasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	b, _ = porterApply(b, porterStep2)
	b, _ = porterApply(b, porterStep3)
	b, _ = porterApply(b, porterStep4)
	// Step 5a.
	if n := len(b); b[n-1] == 'e' && (porterMGt1(b[:n-1]) || porterMEq1(b[:n-1]) && !porterOStar(b[:n-1])) {
		b = b[:n-1]
	}
	// Step 5b.
	if n := len(b); n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && porterMGt1(b[:n-1]) {
		b = b[:n-1]
	}
	return string(b)
}

// porterMaxToken is FTS5's FTS5_PORTER_MAX_TOKEN, in bytes.
const porterMaxToken = 64

// Conditions a rule puts on the stem left after its suffix.
const (
	condNone   = iota
	condMGt0   // m > 0
	condMGt1   // m > 1
	condVowel  // *v*: the stem holds a vowel
	condMGt1ST // m > 1 and the stem ends in s or t
)

type porterRule struct {
	suffix, to string
	cond       uint8
	// removes marks Step 1B's rules whose success triggers its second
	// part ("ed" and "ing").
	removes bool
}

var (
	porterStep1B = []porterRule{
		{"eed", "ee", condMGt0, false}, {"ed", "", condVowel, true}, {"ing", "", condVowel, true},
	}
	porterStep1B2 = []porterRule{
		{"at", "ate", condNone, true}, {"bl", "ble", condNone, true}, {"iz", "ize", condNone, true},
	}
	porterStep2 = []porterRule{
		{"ational", "ate", condMGt0, false}, {"tional", "tion", condMGt0, false},
		{"enci", "ence", condMGt0, false}, {"anci", "ance", condMGt0, false},
		{"izer", "ize", condMGt0, false},
		{"logi", "log", condMGt0, false},
		{"bli", "ble", condMGt0, false}, {"alli", "al", condMGt0, false}, {"entli", "ent", condMGt0, false},
		{"eli", "e", condMGt0, false}, {"ousli", "ous", condMGt0, false},
		{"ization", "ize", condMGt0, false}, {"ation", "ate", condMGt0, false}, {"ator", "ate", condMGt0, false},
		{"alism", "al", condMGt0, false}, {"iveness", "ive", condMGt0, false}, {"fulness", "ful", condMGt0, false},
		{"ousness", "ous", condMGt0, false},
		{"aliti", "al", condMGt0, false}, {"iviti", "ive", condMGt0, false}, {"biliti", "ble", condMGt0, false},
	}
	porterStep3 = []porterRule{
		{"ical", "ic", condMGt0, false}, {"ness", "", condMGt0, false}, {"icate", "ic", condMGt0, false},
		{"iciti", "ic", condMGt0, false}, {"ful", "", condMGt0, false}, {"ative", "", condMGt0, false},
		{"alize", "al", condMGt0, false},
	}
	porterStep4 = []porterRule{
		{"al", "", condMGt1, false}, {"ance", "", condMGt1, false}, {"ence", "", condMGt1, false},
		{"er", "", condMGt1, false}, {"ic", "", condMGt1, false}, {"able", "", condMGt1, false},
		{"ible", "", condMGt1, false}, {"ant", "", condMGt1, false}, {"ement", "", condMGt1, false},
		{"ment", "", condMGt1, false}, {"ent", "", condMGt1, false}, {"ion", "", condMGt1ST, false},
		{"ou", "", condMGt1, false}, {"ism", "", condMGt1, false}, {"ate", "", condMGt1, false},
		{"iti", "", condMGt1, false}, {"ous", "", condMGt1, false}, {"ive", "", condMGt1, false},
		{"ize", "", condMGt1, false},
	}
)

// porterApply applies the first rule of a step whose suffix b ends with,
// leaving a non-empty stem; when that rule's condition fails, the step
// does nothing (no shorter suffix is tried: Porter's longest match, as the
// rules are listed longest first where one suffix ends another).
// applied reports a rule marked removes that fired.
func porterApply(b []byte, rules []porterRule) (out []byte, applied bool) {
	for i := range rules {
		r := &rules[i]
		n := len(r.suffix)
		if len(b) <= n || string(b[len(b)-n:]) != r.suffix {
			continue
		}
		stem := b[:len(b)-n]
		ok := true
		switch r.cond {
		case condMGt0:
			ok = porterGobble(stem, false) != 0
		case condMGt1:
			ok = porterMGt1(stem)
		case condVowel:
			ok = porterHasVowel(stem)
		case condMGt1ST:
			c := stem[len(stem)-1]
			ok = (c == 's' || c == 't') && porterMGt1(stem)
		}
		if !ok {
			return b, false
		}
		return append(stem, r.to...), r.removes
	}
	return b, false
}

// porterStep1A: sses → ss, ies → i, ss → ss, s → "".
func porterStep1A(b []byte) []byte {
	n := len(b)
	if b[n-1] != 's' {
		return b
	}
	switch {
	case b[n-2] == 'e':
		if n > 4 && b[n-4] == 's' && b[n-3] == 's' || n > 3 && b[n-3] == 'i' {
			return b[:n-2]
		}
		return b[:n-1]
	case b[n-2] != 's':
		return b[:n-1]
	}
	return b
}

func porterVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || yIsVowel && c == 'y'
}

// porterGobble skips one vowel-consonant sequence of stem ([C]V…VC) and
// returns how many bytes it took, or 0 if there is none. prevCons says
// whether the byte before stem was a consonant (for the y rule).
func porterGobble(stem []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(stem); i++ {
		if cons = !porterVowel(stem[i], cons); !cons {
			break
		}
	}
	for i++; i < len(stem); i++ {
		if cons = !porterVowel(stem[i], cons); cons {
			return i + 1
		}
	}
	return 0
}

// porterMGt1: the measure m of stem is at least 2.
func porterMGt1(stem []byte) bool {
	n := porterGobble(stem, false)
	return n != 0 && porterGobble(stem[n:], true) != 0
}

// porterMEq1: the measure m of stem is exactly 1.
func porterMEq1(stem []byte) bool {
	n := porterGobble(stem, false)
	return n != 0 && porterGobble(stem[n:], true) == 0
}

// porterOStar (*o): stem ends consonant-vowel-consonant, the last not w, x
// or y.
func porterOStar(stem []byte) bool {
	n := len(stem)
	if n == 0 || stem[n-1] == 'w' || stem[n-1] == 'x' || stem[n-1] == 'y' {
		return false
	}
	mask, cons := 0, false
	for _, c := range stem {
		cons = !porterVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// porterHasVowel (*v*): a, e, i, o, u anywhere, or y after the first byte.
func porterHasVowel(stem []byte) bool {
	for i, c := range stem {
		if porterVowel(c, i > 0) {
			return true
		}
	}
	return false
}
