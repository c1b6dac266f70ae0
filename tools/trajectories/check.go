package main

import (
	"context"

	"github.com/clipfold/clipfold/internal/benchkit"
)

// brokenPairs counts what a provider would refuse in a model input: a
// tool result whose call is not before it in the input (an orphaned
// result), and a call whose result is not in the input (every call of
// a model input has been answered: the model is called again only once
// the tools have run). A cleared or shortened result keeps its
// tool_call_id and is still a result.
func brokenPairs(ctx []message) int {
	calls := map[string]bool{}    // calls made so far
	answered := map[string]bool{} // calls with a result
	broken := 0
	for i := range ctx {
		m := &ctx[i]
		if m.Role == "tool" {
			if !calls[m.ToolCallID] {
				broken++
			}
			answered[m.ToolCallID] = true
			continue
		}
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			broken++
		}
	}
	return broken
}

// lostCheck: every message of the file is in the final active history
// with its bytes, or in recall storage with its bytes (under its id, or
// under another id when compaction replaced it in place and kept the
// original elsewhere). A message in neither is lost; one found only with
// other bytes is altered.
func lostCheck(ctx context.Context, r *trajResult, t *trajectory, final []message, arch *benchkit.Archive) error {
	active := map[string][]byte{}
	for _, m := range final {
		active[m.ID] = m.Raw
	}
	var recalled map[string]bool // every recall row's bytes, read when needed
	for _, m := range t.Messages {
		if raw, ok := active[m.ID]; ok && benchkit.SameJSON(raw, m.Raw) {
			r.InActive++
			continue
		}
		raw, conv, ok, err := arch.Recall(ctx, m.ID)
		if err != nil {
			return err
		}
		if ok && conv == t.ConversationID && benchkit.SameJSON(raw, m.Raw) {
			r.InRecall++
			continue
		}
		if recalled == nil {
			if recalled, err = recallBytes(ctx, arch, t.ConversationID); err != nil {
				return err
			}
		}
		if recalled[string(trimJSON(m.Raw))] {
			r.InRecall++
			continue
		}
		if _, inActive := active[m.ID]; ok || inActive {
			r.Altered = append(r.Altered, m.ID)
		} else {
			r.Lost = append(r.Lost, m.ID)
		}
	}
	return nil
}

// recallBytes returns the raw bytes of every message recall storage
// holds for the conversation.
func recallBytes(ctx context.Context, arch *benchkit.Archive, conv string) (map[string]bool, error) {
	rows, err := arch.Store().DB().QueryContext(ctx, `SELECT raw FROM recall WHERE conversation_id = ?`, conv)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		out[string(trimJSON(raw))] = true
	}
	return out, rows.Err()
}

func trimJSON(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\n' || b[j-1] == '\t' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}
