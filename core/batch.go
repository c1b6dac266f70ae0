package core

import (
	"strings"
	"time"
)

// Batch is one archived summary (docs/spec.md#batch). Depth 0 summarizes raw
// messages; depth n+1 re-summarizes batches of depth ≤ n. Start and End
// are the earliest and latest created_at of the covered messages.
type Batch struct {
	Content          string
	Depth            int
	Start, End       time.Time
	MessageCount     int
	SourceMessageIDs []string
	OperationID      string
	Method           string // MethodLLM or MethodExtractive
}

// Summary methods.
const (
	MethodLLM        = "llm"
	MethodExtractive = "extractive"
)

// BatchLabelPrefix is the label prefix of a conversation's batches: the
// trailing "-" keeps conversation "c1" from matching "c1-x"'s labels
// as far as a prefix can; ParseBatchBlock finishes the job.
func BatchLabelPrefix(conversationID string) string {
	return "compaction-batch-" + conversationID + "-"
}

// BatchLabel is a batch's archival label (seed AC4.2):
// compaction-batch-{conversation_id}-{end_time}.
func BatchLabel(conversationID string, b *Batch) string {
	return BatchLabelPrefix(conversationID) + FormatTime(b.End)
}

// FormatBatchBlock is a batch's archived content: one JSON metadata line,
// "\n", then the summary.
func FormatBatchBlock(conversationID string, b *Batch) string {
	var w jsonWriter
	w.b = make([]byte, 0, 160+len(b.Content)+24*len(b.SourceMessageIDs))
	w.raw(`{"conversation_id":`)
	w.str(conversationID)
	w.raw(`,"operation_id":`)
	w.str(b.OperationID)
	w.raw(`,"depth":`)
	w.int(b.Depth)
	w.raw(`,"start":`)
	w.str(FormatTime(b.Start))
	w.raw(`,"end":`)
	w.str(FormatTime(b.End))
	w.raw(`,"count":`)
	w.int(b.MessageCount)
	w.raw(`,"source_message_ids":[`)
	for i, id := range b.SourceMessageIDs {
		if i > 0 {
			w.raw(",")
		}
		w.str(id)
	}
	w.raw(`],"method":`)
	w.str(orDefault(b.Method, MethodLLM))
	w.raw("}\n")
	w.raw(b.Content)
	return string(w.b)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// BlockOwner says how an archived block was attributed to a conversation.
type BlockOwner uint8

const (
	// OwnerMetadata: the JSON metadata line names the conversation.
	OwnerMetadata BlockOwner = iota + 1
	// OwnerLegacyLabel: a legacy block, attributed by its label.
	OwnerLegacyLabel
)

// ParseBatchBlock reads an archived block back into a Batch (ParseBlock).
// It returns ok = false for a block that is not a readable batch of
// conversationID: no metadata, malformed metadata, metadata naming another
// conversation, or a legacy block whose label, after the conversation's
// prefix, is not a bare timestamp (so "c1" never claims "c1-x"'s batches).
func ParseBatchBlock(conversationID, label, content string) (b Batch, ok bool) {
	m, ok, _ := ParseBlock(content)
	if !ok {
		return Batch{}, false
	}
	if m.Legacy {
		suffix, found := strings.CutPrefix(label, BatchLabelPrefix(conversationID))
		if !found {
			return Batch{}, false
		}
		if _, err := ParseTime(suffix); err != nil {
			return Batch{}, false
		}
	} else if m.ConversationID != conversationID {
		return Batch{}, false
	}
	return m.Batch, true
}
