package main

import "strings"

// Helpers shared by the fidelity conversations' storylines.

// say writes one message for a role ("user" or "assistant") and returns
// its id.
func (g *gen) say(role, text string) string {
	if role == "user" {
		return g.user(text)
	}
	return g.assistant(text)
}

// fillK expands {a|b|c} alternatives like fill, but every group takes
// alternative k (modulo its length), so the groups of an exchange that
// are written with the same number of alternatives stay in step: the
// third question gets the third answer.
func fillK(tpl string, k int) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i:], '}')
		if j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:i])
		alts := strings.Split(tpl[i+1:i+j], "|")
		b.WriteString(alts[k%len(alts)])
		tpl = tpl[i+j+1:]
	}
}

// talk writes a scripted exchange. Each line starts with its speaker:
// "u:" the user, "a:" the assistant, or "x:"/"y:" for a symmetric
// exchange where x is chosen at random (and y is the other). The {a|b}
// alternatives of all lines are chosen in step (fillK). It returns the
// ids written.
func (g *gen) talk(lines ...string) []string {
	return g.converse(true, lines)
}

// chat is talk with every {a|b} group chosen independently.
func (g *gen) chat(lines ...string) []string {
	return g.converse(false, lines)
}

func (g *gen) converse(inStep bool, lines []string) []string {
	k := g.intn(1 << 20)
	x, y := "user", "assistant"
	if g.chance(0.5) {
		x, y = y, x
	}
	ids := make([]string, 0, len(lines))
	for _, l := range lines {
		role := ""
		switch {
		case strings.HasPrefix(l, "u:"):
			role = "user"
		case strings.HasPrefix(l, "a:"):
			role = "assistant"
		case strings.HasPrefix(l, "x:"):
			role = x
		case strings.HasPrefix(l, "y:"):
			role = y
		default:
			panic("talk: line without speaker: " + l)
		}
		text := strings.TrimSpace(l[2:])
		if inStep {
			text = fillK(text, k)
		} else {
			text = g.fill(text)
		}
		ids = append(ids, g.say(role, text))
	}
	return ids
}

// deck deals the indexes 0..n-1 in a random order, reshuffling when it
// runs out, so filler topics do not repeat until all have been used.
type deck struct {
	g     *gen
	n     int
	order []int
}

func newDeck(g *gen, n int) *deck { return &deck{g: g, n: n} }

func (d *deck) draw() int {
	if len(d.order) == 0 {
		d.order = make([]int, d.n)
		for i := range d.order {
			d.order[i] = i
		}
		for i := len(d.order) - 1; i > 0; i-- {
			j := d.g.intn(i + 1)
			d.order[i], d.order[j] = d.order[j], d.order[i]
		}
	}
	x := d.order[0]
	d.order = d.order[1:]
	return x
}

// storyline is the plan of a fidelity conversation: per session, the
// beats (planted facts with their questions) in order. run writes the
// sessions: opening, the beats with filler between them, filler, closing.
type storyline struct {
	g *gen
	// gap returns how many days pass before session k (k ≥ 1) and the
	// hours (UTC) it may start between.
	minGap, maxGap   int
	fromHour, toHour int
	opening          func(k int)
	filler           func()
	closing          func(k int)
	// fillers before each beat and after the last one: lo..hi topics.
	fillLo, fillHi int
	tailLo, tailHi int
}

func (s *storyline) run(sessions [][]func()) {
	g := s.g
	for k, beats := range sessions {
		if k == 0 {
			// The first session includes the system message before it.
			g.sessions = append(g.sessions, 0)
		} else {
			g.session(s.minGap, s.maxGap, s.fromHour, s.toHour)
		}
		s.opening(k)
		for _, b := range beats {
			for n := g.between(s.fillLo, s.fillHi); n > 0; n-- {
				s.filler()
			}
			b()
		}
		for n := g.between(s.tailLo, s.tailHi); n > 0; n-- {
			s.filler()
		}
		s.closing(k)
	}
}
