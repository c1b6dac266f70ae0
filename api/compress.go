package api

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// HostCaller calls one host function of docs/spec.md#host-functions
// (llm_complete, memory_list, compaction_commit) with a JSON input and returns
// its JSON output. The plug-in implements it with Extism imports; Go tests and
// hosts implement it by calling hostfuncs directly, so both paths run the
// exact same JSON.
type HostCaller interface {
	CallHost(name string, input []byte) ([]byte, error)
}

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time        { return time.Now() }
func (SystemClock) Sleep(d time.Duration) { time.Sleep(d) }

// Compress is the compress export (docs/spec.md#compress): {conversation_id,
// history, config, usage?, dry_run?, now?, operation_id?} → CompactionResult.
// The breaker state lives in e, so one Env must serve one plug-in instance.
func (e *Env) Compress(in []byte, h HostCaller, clock core.Clock) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	var ci core.CompressInput
	var warnings []string
	warn := func(s string) {
		warnings = append(warnings, s)
		if e.Warn != nil {
			e.Warn(s)
		}
	}
	if ci.Config, err = decodeConfig(root.Get("config"), &e.Base, warn); err != nil {
		return nil, err
	}
	conv := root.Get("conversation_id")
	if !conv.Exists() {
		return nil, required("conversation_id")
	}
	if conv.Type != gjson.String || conv.Str == "" {
		return nil, core.Invalid("conversation_id", "must be a non-empty string")
	}
	ci.ConversationID = conv.Str
	if ci.History, ci.Shape, err = e.messages(root, "history", msgRules{}); err != nil {
		return nil, err
	}
	if err := historyIDs(root.Get("history_ids"), ci.History); err != nil {
		return nil, err
	}
	core.AssignIDs(ci.ConversationID, ci.History)
	if err := uniqueIDs(ci.History); err != nil {
		return nil, err
	}
	if ci.Usage, err = decodeUsage(root.Get("usage"), len(ci.History)); err != nil {
		return nil, err
	}
	switch o := root.Get("history_owner"); {
	case o.Type == gjson.Null:
		ci.HistoryOwner = core.OwnerStore
	case o.Type == gjson.String && (o.Str == core.OwnerStore || o.Str == core.OwnerCaller):
		ci.HistoryOwner = o.Str
	default:
		return nil, core.Invalid("history_owner", `must be "store" or "caller", got `+clip(o.Raw, 40))
	}
	switch d := root.Get("only_if_due"); d.Type {
	case gjson.True:
		ci.OnlyIfDue = true
	case gjson.False, gjson.Null:
	default:
		return nil, wrongType("only_if_due", "true or false", d)
	}
	switch d := root.Get("dry_run"); d.Type {
	case gjson.True:
		ci.DryRun = true
	case gjson.False, gjson.Null:
	default:
		return nil, wrongType("dry_run", "true or false", d)
	}
	if ci.Now, err = decodeNow(root.Get("now")); err != nil {
		return nil, err
	}
	op := root.Get("operation_id")
	switch {
	case op.Type == gjson.String && op.Str != "":
		ci.OperationID = op.Str
	case !op.Exists() || op.Type == gjson.Null:
		ci.OperationID = NewOperationID()
	default:
		return nil, core.Invalid("operation_id", "must be a non-empty string")
	}
	if e.breakers == nil {
		e.breakers = &core.Breakers{}
	}
	hp := hostPorts{h}
	res := core.Compress(&ci, core.Ports{LLM: hp, Memory: hp, Committer: hp, Clock: clock, Breakers: e.breakers, Rewriter: rewriter{}})
	res.Warnings = append(warnings, res.Warnings...)
	return appendResult(e.outBuffer(len(in)+1024), &ci, &res), nil
}

// historyIDs reads compress's optional "history_ids": one entry per
// history message, a string or null: the id a host that stores the
// history keeps a message under when the message has no id of its own
// (the derived id it was given when stored; docs/spec.md#derived-ids). A
// message's own id wins; an entry that contradicts it is an error.
func historyIDs(r gjson.Result, msgs []core.Message) error {
	if r.Type == gjson.Null {
		return nil
	}
	if !r.IsArray() {
		return wrongType("history_ids", "an array of strings or nulls, one per history message", r)
	}
	i := 0
	var err error
	r.ForEach(func(_, v gjson.Result) bool {
		f := idx("history_ids", i)
		switch {
		case i >= len(msgs):
			err = core.Invalid("history_ids", "has more entries than history has messages")
		case v.Type == gjson.Null:
		case v.Type != gjson.String || v.Str == "":
			err = wrongType(f, "a non-empty string or null", v)
		case msgs[i].ID == "":
			msgs[i].ID = v.Str
		case msgs[i].ID != v.Str:
			err = core.Invalid(f, "is "+strconv.Quote(clip(v.Str, 40))+" but history["+strconv.Itoa(i)+"].id is "+strconv.Quote(clip(msgs[i].ID, 40)))
		}
		i++
		return err == nil
	})
	if err == nil && i != len(msgs) {
		err = core.Invalid("history_ids", "has "+strconv.Itoa(i)+" entries, history "+strconv.Itoa(len(msgs))+" messages")
	}
	return err
}

func uniqueIDs(msgs []core.Message) error {
	i, j := core.FirstDuplicate(len(msgs), func(i int) string { return msgs[i].ID })
	if i < 0 {
		return nil
	}
	return core.Invalid(idx("history", i)+".id", "duplicates history["+strconv.Itoa(j)+"].id "+strconv.Quote(msgs[i].ID))
}

// decodeNow reads "now": an RFC 3339 string or Unix milliseconds.
func decodeNow(r gjson.Result) (time.Time, error) {
	switch r.Type {
	case gjson.Null:
		return time.Time{}, nil
	case gjson.String:
		t, err := core.ParseTime(r.Str)
		if err != nil {
			return t, core.Invalid("now", "must be an RFC 3339 time or Unix milliseconds, got "+strconv.Quote(clip(r.Str, 64)))
		}
		return t, nil
	case gjson.Number:
		// An instant RFC 3339 can write (years 0000–9999): 1e999 (+Inf),
		// -1e999 and other out-of-range numbers are refused, not clamped.
		if !(r.Num >= minNowMs && r.Num <= maxNowMs) {
			return time.Time{}, core.Invalid("now", "must be Unix milliseconds within years 0000–9999, got "+strconv.FormatFloat(r.Num, 'g', -1, 64))
		}
		return time.UnixMilli(r.Int()).UTC(), nil
	}
	return time.Time{}, wrongType("now", "an RFC 3339 time or Unix milliseconds", r)
}

// The Unix milliseconds of 0000-01-01T00:00:00.000Z and
// 9999-12-31T23:59:59.999Z.
const minNowMs, maxNowMs = -62167219200000, 253402300799999

// NewOperationID returns a fresh "op_…" id: time plus 64 random bits.
// math/rand/v2 is seeded by the runtime (WASI random_get in the plug-in);
// ids need uniqueness, not secrecy, and crypto/rand would add ~0.5 MB to
// the .wasm.
func NewOperationID() string {
	return "op_" + strconv.FormatInt(time.Now().UnixMilli(), 36) + strconv.FormatUint(rand.Uint64(), 36)
}

func appendResult(b []byte, in *core.CompressInput, r *core.CompressResult) []byte {
	b = append(b, `{"history":[`...)
	n := 0
	archive, hasArchive := "", false
	if r.Insert != nil {
		b = append(b, r.InsertRaw...)
		archive, hasArchive = r.Insert.Content, true
		n++
	} else if len(r.Kept) > 0 && r.Kept[0] == 0 && core.IsClipArchive(&r.History[0]) {
		archive, hasArchive = r.History[0].Content, true
	}
	for _, k := range r.Kept {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, r.History[k].Raw...)
		n++
	}
	b = append(b, `],"clip_archive":`...)
	b = appendNullableString(b, archive, hasArchive)
	b = append(b, `,"batches_created":`...)
	b = strconv.AppendInt(b, int64(r.BatchesCreated), 10)
	b = append(b, `,"messages_compressed":`...)
	b = strconv.AppendInt(b, int64(r.MessagesCompressed), 10)
	b = append(b, `,"tokens_estimate_before":`...)
	b = strconv.AppendInt(b, int64(r.TokensBefore), 10)
	b = append(b, `,"tokens_estimate_after":`...)
	b = strconv.AppendInt(b, int64(r.TokensAfter), 10)
	b = append(b, `,"failed":`...)
	b = strconv.AppendBool(b, r.Failed)
	b = append(b, `,"failure_code":`...)
	b = appendNullableString(b, r.FailureCode, r.Failed)
	b = append(b, `,"failure_message":`...)
	b = appendNullableString(b, r.FailureMessage, r.Failed)
	b = append(b, `,"operation_id":`...)
	b = core.AppendJSONString(b, r.OperationID)
	b = append(b, `,"llm_calls":`...)
	b = strconv.AppendInt(b, int64(r.LLMCalls), 10)
	b = append(b, `,"retries":`...)
	b = strconv.AppendInt(b, int64(r.Retries), 10)
	b = append(b, `,"llm_time_ms":`...)
	b = strconv.AppendInt(b, r.LLMTime.Milliseconds(), 10)
	b = append(b, `,"batches":[`...)
	for i := range r.Batches {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendBatch(b, &r.Batches[i])
	}
	b = append(b, `],"warnings":[`...)
	for i, w := range r.Warnings {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendJSONString(b, w)
	}
	b = append(b, `],"consecutive_failures":`...)
	b = strconv.AppendInt(b, int64(r.ConsecutiveFailures), 10)
	b = append(b, `,"tool_results_cleared":`...)
	b = strconv.AppendInt(b, int64(r.ToolResultsCleared), 10)
	b = append(b, `,"messages_truncated":`...)
	b = strconv.AppendInt(b, int64(r.MessagesTruncated), 10)
	if in.DryRun && r.Commit != nil && !r.Failed {
		b = append(b, `,"commit":`...)
		b = AppendCommit(b, r.Commit)
	}
	return append(b, '}')
}

func appendNullableString(b []byte, s string, set bool) []byte {
	if !set {
		return append(b, "null"...)
	}
	return core.AppendJSONString(b, s)
}

// appendBatchSpan writes a batch's depth, span and sources:
// ,"depth","start_time","end_time","message_count","source_message_ids"
// (AppendBatch's and parseBlocks' batches alike).
func appendBatchSpan(b []byte, bt *core.Batch) []byte {
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(bt.Depth), 10)
	b = append(b, `,"start_time":`...)
	b = core.AppendJSONString(b, core.FormatTime(bt.Start))
	b = append(b, `,"end_time":`...)
	b = core.AppendJSONString(b, core.FormatTime(bt.End))
	b = append(b, `,"message_count":`...)
	b = strconv.AppendInt(b, int64(bt.MessageCount), 10)
	b = append(b, `,"source_message_ids":`...)
	return appendStrings(b, bt.SourceMessageIDs)
}

// AppendBatch writes a Batch (docs/spec.md#batch).
func AppendBatch(b []byte, bt *core.Batch) []byte {
	b = append(b, `{"content":`...)
	b = core.AppendJSONString(b, bt.Content)
	b = appendBatchSpan(b, bt)
	b = append(b, `,"operation_id":`...)
	b = core.AppendJSONString(b, bt.OperationID)
	b = append(b, `,"method":`...)
	method := bt.Method
	if method == "" {
		method = core.MethodLLM
	}
	b = core.AppendJSONString(b, method)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendJSONString(b, s)
	}
	return append(b, ']')
}

// AppendInsertMessage writes the clip-archive message as a native Message
// (docs/spec.md#message).
func AppendInsertMessage(b []byte, m *core.InsertMessage) []byte {
	return core.AppendInsertMessage(b, m)
}
