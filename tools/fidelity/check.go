package main

import (
	"strings"

	"github.com/clipfold/clipfold/internal/benchkit"
)

// The answer rules, one place for all of them (docs/fidelity.md states
// them in words):
//
//   - A context answers a question when one of its units does. A message
//     kept verbatim is one unit: it answers when it is one of the
//     question's evidence messages (the evidence holds the answer by
//     construction; for a "when" question its created_at is the date), or
//     when its text holds an answer string (and, for "when", an anchor).
//     The clip-archive message is split into lines, each a unit: a line
//     answers when it holds an answer string — for "when" questions the
//     date and one of the anchors on the same line, since a bare date
//     range ("Batch 3 — 2023-03-04T… to …") says nothing about which event
//     happened when.
//   - Matching is case-insensitive substring matching. "When" answers are
//     also accepted in a few more spellings of the date (acceptedDates).

// isArchive reports whether m is a clip-archive message.
func isArchive(m *message) bool { return benchkit.IsArchive(m) }

// contextAnswers reports whether the messages of a context answer q, and
// which unit did ("" when none): a message id, or "archive" for a line
// of the clip-archive.
func contextAnswers(q *question, msgs []message) (bool, string) {
	ev := evidenceSet(q)
	for i := range msgs {
		m := &msgs[i]
		if isArchive(m) {
			if textAnswers(q, m.Text) {
				return true, "archive"
			}
			continue
		}
		if ev[m.ID] || unitAnswers(q, m.Text) {
			return true, m.ID
		}
	}
	return false, ""
}

// textAnswers checks a summary text line by line.
func textAnswers(q *question, text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if unitAnswers(q, line) {
			return true
		}
	}
	return false
}

// unitAnswers: an answer string, plus an anchor for "when" questions.
func unitAnswers(q *question, text string) bool {
	t := strings.ToLower(text)
	if !containsAny(t, q.accepted()) {
		return false
	}
	return q.Category != "when" || containsAny(t, q.Anchors)
}

func containsAny(lower string, xs []string) bool {
	for _, x := range xs {
		if x != "" && strings.Contains(lower, strings.ToLower(x)) {
			return true
		}
	}
	return false
}

func evidenceSet(q *question) map[string]bool {
	ev := make(map[string]bool, len(q.Evidence))
	for _, id := range q.Evidence {
		ev[id] = true
	}
	return ev
}

// hitFinds is the search rule: a message hit is one of the evidence
// messages, or a batch hit summarizes one of them (source_message_ids)
// and its text holds the answer (textAnswers).
func hitFinds(q *question, h *benchkit.Hit) bool {
	ev := evidenceSet(q)
	if h.Kind == "message" {
		return ev[h.ID]
	}
	covers := false
	for _, id := range h.SourceIDs {
		if ev[id] {
			covers = true
			break
		}
	}
	return covers && textAnswers(q, h.Text)
}
