package core

import "github.com/tidwall/gjson"

// parseMetaLine reads a batch's JSON metadata line (see FormatBatchBlock).
// gjson is used internally only; nothing of it crosses core's API.
func parseMetaLine(line string) (b Batch, conversationID string, ok bool) {
	if !gjson.Valid(line) {
		return Batch{}, "", false
	}
	r := gjson.Parse(line)
	if !r.IsObject() {
		return Batch{}, "", false
	}
	conv := r.Get("conversation_id")
	start, err1 := ParseTime(r.Get("start").String())
	end, err2 := ParseTime(r.Get("end").String())
	depth := r.Get("depth")
	count := r.Get("count")
	if conv.Type != gjson.String || err1 != nil || err2 != nil ||
		depth.Type != gjson.Number || count.Type != gjson.Number ||
		depth.Int() < 0 || count.Int() < 0 || depth.Int() > MaxInt || count.Int() > MaxInt {
		return Batch{}, "", false
	}
	b = Batch{
		Depth:        int(depth.Int()),
		Start:        start,
		End:          end,
		MessageCount: int(count.Int()),
		OperationID:  r.Get("operation_id").String(),
		Method:       orDefault(r.Get("method").String(), MethodLLM),
	}
	for _, id := range r.Get("source_message_ids").Array() {
		b.SourceMessageIDs = append(b.SourceMessageIDs, id.String())
	}
	return b, conv.String(), true
}
