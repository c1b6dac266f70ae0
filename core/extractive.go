package core

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The extractive summarizer is clipfold's offline summarizer: it picks the
// most informative sentences of what it is given, with no model at all. It
// is what compress uses with `summarizer: "extractive"` and with
// `fallback: "extractive"` (ExtractiveSummarizeMessages,
// ExtractiveResummarize), and what the extractiveSummary export answers for
// hosts that need an offline LLM (ExtractiveSummary). It must work
// anywhere the plug-in runs: hand-written scanning (no regexp, no
// reflection, no goroutines), deterministic (no clock, no randomness, no
// map iteration decides anything), O(total text).
//
// What it does, for all three entry points:
//   - Each summary summarizes its own input. A previous summary (the
//     fold-in context of a summarization request, or the prior
//     clip-archive) only guides the choice: a sentence it already holds is
//     not picked again, one that mostly repeats its words is marked down,
//     and none of its lines is re-emitted. (Re-emitting it made every
//     batch carry the one before it: ten archives held 1,138 lines of
//     which 734 were unique.)
//   - Sentences are cut from every message (lines first, then ". ", "! ",
//     "? " and CJK stops) and scored by what they carry, whoever said it:
//     content words, names, numbers and identifiers, dates and times,
//     decisions, preferences, plans, constraints, errors and fixes. User
//     and assistant weigh the same (a fixed user bonus made summaries 3:1
//     user); tool output and tool-call arguments weigh less (a share of
//     what they show, wToolGain).
//   - Words, names and identifiers count by how rare they are in what is
//     being summarized (1/√n for one found in n sources): the paths,
//     acronyms and words a log repeats on every line say less than a fact
//     said once. Length costs: the summary's budget is in characters.
//   - A tool result is said with its call, "Tool name(arguments): …", and
//     JSON output as facts, "key: value; …" (extractive_tool.go); a call
//     whose result is there is not said again.
//   - Tool output and calls that repeat one shape (the same text but for
//     numbers and times: log lines, health checks, retries) collapse into
//     their first line, written "… (×12, to 2025-09-19)" and marked down
//     as routine; a re-summarization adds the counts up. Output collapses
//     only within one result or with output of the same call, and its ids
//     are part of its shape. Speech is never collapsed: "$4,000" then
//     "$5,000" is an update, not a repeat.
//   - Greetings, thanks, acknowledgements and content-free questions ("How
//     have you been?", "What about you?") are dropped outright. Lines of
//     source code, restatements of the previous message (or, when prose
//     says what a tool result shows, the raw result), near-duplicates
//     that differ only in numbers, and every further sentence of the same
//     message are marked down, so one long message cannot fill the summary.
//   - The chosen sentences come out one line per message (per tool
//     result), in chronological order, labelled ("User: …", "Assistant:
//     …", "Tool get_order(4471): …", "Tool call: …"; "Tool: …" for a
//     result whose call is not known) and, when the message has a
//     created_at, dated with its UTC day: "[2023-05-08] User: …". A
//     re-summarization keeps each line's date and label, keeps a sentence
//     said in several batches once, and covers its whole span: the best
//     sentence of every day is chosen first, so a busy day cannot push a
//     quiet one out of the fold.
//
// Length: the result's EstimateTokens is at most the max_tokens given
// (1024 when ≤ 0). New messages are cut to about a third of their text
// (an extractive summary that keeps everything would not compact
// anything) and at most extractiveChunkMax code points; batches being
// re-summarized only to max_tokens and extractiveFoldMax, without their
// duplicates and filler. The result is
// non-empty whenever the input has any text: an empty summary is a failure
// to the pipeline. Text is counted and cut by code points; invalid UTF-8
// is replaced by U+FFFD, so the output is always valid UTF-8.
//
// This file holds the entry points, the tuning constants and the
// extractor's types. The steps are in files of their own:
// extractive_source.go (messages read into sources and sentences),
// extractive_fold.go (summary batches read back for a re-summarization),
// extractive_scan.go (one sentence's words and identifiers),
// extractive_score.go (features, duplicates and scores),
// extractive_select.go (the budget, the sentences chosen and the summary
// written), extractive_tool.go (tool calls and JSON output) and
// extractive_text.go (lines, sentences, whitespace).

// ExtractiveSummary answers a summarization request
// (BuildSummarizationRequest or BuildResummarizationRequest) like an LLM
// would, with the extractive summarizer. A request carries no dates, so
// its lines are not dated. The system prompt and the directive are not
// summarized; the "Previous summary of conversation" message only guides
// the choice; "Summary batch" messages are re-summarized line by line.
func ExtractiveSummary(req *ModelRequest) string {
	if req == nil {
		return ""
	}
	var ex extractor
	ex.collectRequest(req.Messages)
	return ex.summarize(req.MaxTokens)
}

// ExtractiveSummarizeMessages summarizes msgs (one chunk of a compaction)
// with the extractive summarizer: each kept line is dated from its
// message's created_at. previousSummary (the summary of the chunk before,
// or the prior clip-archive) guides the choice and is never re-emitted.
// Each message's text is middle-truncated to maxMessageChars code points
// first (0 = no limit), as in a summarization request.
func ExtractiveSummarizeMessages(previousSummary string, msgs []Message, maxTokens, maxMessageChars int) string {
	var ex extractor
	if previousSummary != "" {
		ex.addGuide(validText(previousSummary))
	}
	order := Identity(len(msgs))
	slices.SortStableFunc(order, func(a, b int) int { return msgs[a].CreatedAt.Compare(msgs[b].CreatedAt) })
	tools := newToolContext(msgs)
	for k, i := range order {
		ex.addCoreMessage(msgs, i, k, maxMessageChars, tools)
	}
	return ex.summarize(maxTokens)
}

// ExtractiveResummarize folds several batch summaries into one: their
// lines, with the dates and labels they carry, are scored and chosen like
// sentences of messages; a sentence several batches hold is kept once.
// Lines come out in date order (stable; an undated line sorts with the
// dated line before it in its batch), since batches cut in importance
// order overlap in time.
func ExtractiveResummarize(contents []string, maxTokens int) string {
	var ex extractor
	ex.addBatches(contents)
	return ex.summarize(maxTokens)
}

// Tuning of the extractive summarizer. They are constants, not config,
// because the extractive summary only has to be a good-enough stand-in
// for an LLM.
const (
	// extractiveRatioDiv: new messages are cut to about
	// 1/extractiveRatioDiv of their code points (before max_tokens applies).
	extractiveRatioDiv = 3
	// extractiveMinRunes: new text shorter than this many code points is
	// not cut by the ratio, only by max_tokens and the filler rule; longer
	// text keeps at least this much.
	extractiveMinRunes = 400
	// extractiveSentenceMax: the longest a single sentence may be, in code
	// points, before it is cut (a stack trace on one line, a JSON dump).
	extractiveSentenceMax = 320
	// extractiveRestateWords bounds the content words remembered per
	// source for restatement detection.
	extractiveRestateWords = 64
	// dateLen is the length of a line's date prefix, "[2023-05-08] ".
	dateLen = 13
	// extractiveChunkMax and extractiveFoldMax bound a summary of new
	// messages and a re-summarization, in code points, whatever max_tokens
	// allows: like an LLM, the summarizer writes less than its limit, so
	// that a clip-archive (a fold and up to three chunk summaries shown)
	// stays about 1,000 tokens at any window. The fold holds the oldest
	// context and most of what the archive answers: it gets the room
	// (2,400 instead of 2,880 lost 10 of 132 answers of make fidelity;
	// chunk summaries of 300 instead of 400 lost 3).
	extractiveChunkMax = 400
	extractiveFoldMax  = 2880
)

// Source kinds.
const (
	exNew  uint8 = iota // a message being summarized
	exLine              // a line of a summary batch being re-summarized
)

// Speakers, from the message role or a summary line's label.
const (
	spUser uint8 = iota
	spAssistant
	spTool
	spToolCall
	spSystem
	spNone // an unlabelled summary line
)

// exSource is one message, or one line of a summary batch: each becomes
// at most one output line.
type exSource struct {
	label   string // "User", …; "" for unlabelled summary lines
	date    string // "2023-05-08", or "" when undated
	kind    uint8
	speaker uint8
	msg     int    // position among the input's messages, for the recency bonus
	call    uint64 // callKey of the label: a tool result's call
}

// exSent is one candidate sentence.
type exSent struct {
	text     string // trimmed, valid UTF-8, not yet whitespace-collapsed
	src      int32
	runes    int32 // code points after whitespace collapsing
	cost     int32 // code points it takes in the output (cut, plus separator)
	score    float64
	filler   bool
	dup      bool
	chosen   bool
	repeats  uint8
	hash     uint64
	features exFeatures
	// count is how many lines of tool output this sentence stands for
	// (itself and the near-duplicates collapsed into it; 0 means 1), and
	// last the latest date among them ("" when undated): it is written
	// " (×count, to last)".
	count int32
	last  string
}

type extractor struct {
	srcs  []exSource
	sents []exSent
	// guideHash holds the sentence hashes of the previous summary, and
	// guideWords its content-word hashes: a sentence already said there is
	// not picked again, one mostly made of its words is marked down.
	guideHash  map[uint64]struct{}
	guideWords map[uint64]struct{}
	guides     []string // the guide texts, summarized when nothing else is given
	// skipped is the first structural line of a summary (addLines), said
	// when the input holds nothing else.
	skipped string
	// Code points of new-message and summary-line sentences, and the
	// label/date overhead of their sources.
	newRunes, lineRunes, overhead int
	// words holds the content-word hashes of the sentence scan just read;
	// prevWords and curWords those of the previous and the current source
	// (bounded), for restatement detection.
	words, prevWords, curWords []uint64
	toks                       []exTok // the identifier tokens of the sentence scan just read
	wordsSrc                   int32
	lowerBuf                   [32]byte
	// idShape: scan counts the ids of a sentence in its shape (tokens of
	// letters and digits that are not dates, times or numbers).
	idShape bool
}

// validText replaces invalid UTF-8 by U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
