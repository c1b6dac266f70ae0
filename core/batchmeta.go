package core

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// BlockMeta is what an archived block's content says of itself: a batch
// (ParseBlock).
type BlockMeta struct {
	// Batch is the batch the first line describes; Batch.Content is the
	// summary after it.
	Batch Batch
	// ConversationID is the metadata line's conversation; "" for the
	// legacy header, which names none (its label does).
	ConversationID string
	// Legacy: the first line is the legacy "[depth:N|start:…|end:…|count:M]"
	// header.
	Legacy bool
}

// ParseBlock reads an archived block's content (docs/spec.md#archived-batches),
// as every host reads it: ok with the batch when its first line is the JSON
// metadata line or the legacy header; not ok and problem "" when the block
// carries no batch metadata (free text); not ok and problem saying what is
// wrong, naming the field, when the first line is meant as metadata (it
// starts with "{" or "[depth:") but cannot be read. A malformed block is
// never a batch: compress leaves it alone with a warning, and stores read
// it as a plain block, whole (hostfuncs/store/SCHEMA.md, "blocks").
func ParseBlock(content string) (m BlockMeta, ok bool, problem string) {
	line, rest, _ := strings.Cut(content, "\n")
	switch {
	case strings.HasPrefix(line, "{"):
		m.Batch, m.ConversationID, problem = parseMetaLine(line)
	case strings.HasPrefix(line, "[depth:"):
		m.Legacy = true
		m.Batch, problem = parseLegacyHeader(line)
	default:
		return BlockMeta{}, false, ""
	}
	if problem != "" {
		return BlockMeta{}, false, problem
	}
	m.Batch.Content = rest
	return m, true, ""
}

// parseMetaLine reads a batch's JSON metadata line (see FormatBatchBlock):
// conversation_id, depth, start, end and count are required; operation_id,
// method and source_message_ids may be absent or null. problem names the
// first field that is wrong. gjson is used internally only; nothing of it
// crosses core's API.
func parseMetaLine(line string) (b Batch, conversationID, problem string) {
	if !gjson.Valid(line) {
		return Batch{}, "", "metadata line: not valid JSON"
	}
	r := gjson.Parse(line)
	if !r.IsObject() {
		return Batch{}, "", "metadata line: must be a JSON object"
	}
	conv := r.Get("conversation_id")
	if problem = metaString(conv, "conversation_id", true); problem != "" {
		return
	}
	var depth, count int
	if depth, problem = metaCount(r.Get("depth"), "depth"); problem != "" {
		return
	}
	if b.Start, problem = metaTime(r.Get("start"), "start"); problem != "" {
		return
	}
	if b.End, problem = metaTime(r.Get("end"), "end"); problem != "" {
		return
	}
	if count, problem = metaCount(r.Get("count"), "count"); problem != "" {
		return
	}
	op, method := r.Get("operation_id"), r.Get("method")
	if problem = metaString(op, "operation_id", false); problem != "" {
		return
	}
	if problem = metaString(method, "method", false); problem != "" {
		return
	}
	ids := r.Get("source_message_ids")
	if ids.Exists() && ids.Type != gjson.Null && !ids.IsArray() {
		return Batch{}, "", "source_message_ids: must be an array of strings, got " + metaValue(ids)
	}
	for i, id := range ids.Array() {
		if id.Type != gjson.String {
			return Batch{}, "", "source_message_ids[" + strconv.Itoa(i) + "]: must be a string, got " + metaValue(id)
		}
		b.SourceMessageIDs = append(b.SourceMessageIDs, id.Str)
	}
	b.Depth, b.MessageCount, b.OperationID = depth, count, op.Str
	b.Method = orDefault(method.Str, MethodLLM)
	return b, conv.Str, ""
}

// metaString checks a string field of the metadata line: absent or null
// is "" unless required.
func metaString(v gjson.Result, field string, required bool) string {
	switch {
	case v.Type == gjson.String:
		return ""
	case !v.Exists() && required:
		return field + ": is required"
	case !v.Exists() || v.Type == gjson.Null && !required:
		return ""
	}
	return field + ": must be a string, got " + metaValue(v)
}

// metaCount reads depth or count: a whole number from 0 to MaxInt.
func metaCount(v gjson.Result, field string) (int, string) {
	if !v.Exists() {
		return 0, field + ": is required"
	}
	if v.Type != gjson.Number || v.Num < 0 || v.Num != math.Trunc(v.Num) || v.Num > float64(MaxInt) {
		return 0, field + ": must be a whole number from 0, got " + metaValue(v)
	}
	return int(v.Num), ""
}

// metaTime reads start or end: an RFC 3339 instant.
func metaTime(v gjson.Result, field string) (t time.Time, problem string) {
	if !v.Exists() {
		return t, field + ": is required"
	}
	if v.Type == gjson.String {
		var err error
		if t, err = ParseTime(v.Str); err == nil {
			return t, ""
		}
	}
	return t, field + ": must be an RFC 3339 time, got " + metaValue(v)
}

// metaValue shows a value of the metadata line in an error: its JSON,
// cut to 40 bytes.
func metaValue(v gjson.Result) string {
	if !v.Exists() {
		return "nothing"
	}
	s := v.Raw
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}

// parseLegacyHeader reads the legacy "[depth:N|start:ISO|end:ISO|count:M]"
// header (method llm, no sources); other keys are skipped.
func parseLegacyHeader(line string) (b Batch, problem string) {
	if !strings.HasSuffix(line, "]") {
		return Batch{}, "legacy header: must end with \"]\""
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(line[1:len(line)-1], "|") {
		k, v, found := strings.Cut(part, ":")
		if !found {
			return Batch{}, "legacy header: " + strconv.Quote(part) + " is not key:value"
		}
		var err error
		switch k {
		case "depth":
			b.Depth, err = legacyCount(v)
		case "start":
			b.Start, err = ParseTime(v)
		case "end":
			b.End, err = ParseTime(v)
		case "count":
			b.MessageCount, err = legacyCount(v)
		default:
			continue
		}
		if err != nil {
			return Batch{}, "legacy header: " + k + ": " + strconv.Quote(v) + " is not valid"
		}
		seen[k] = true
	}
	for _, k := range [...]string{"depth", "start", "end", "count"} {
		if !seen[k] {
			return Batch{}, "legacy header: " + k + " is missing"
		}
	}
	b.Method = MethodLLM
	return b, ""
}

func legacyCount(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = strconv.ErrRange
	}
	return n, err
}
