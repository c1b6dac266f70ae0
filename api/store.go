package api

import (
	"strconv"
	"time"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// The store exports: what a store writes and reads is decided here, once,
// so that every host's store — the Go stores natively (core.PlanCommit,
// core.ParseBlock, DecodeAppend), the Python and Node stores through
// these exports — refuses the same input in the same words and writes the
// same rows. A host only runs its SQL with them (hostfuncs/store/SCHEMA.md).

// PlanCommit is the planCommit export: {commit, now?} → the rows a store
// writes for a compaction_commit input (core.PlanCommit), with the checks
// to make first:
//
//	{"conversation_id","operation_id","now","history_owner",
//	 "checks":[{"field","must","ids"}],"remove_ids":[…],"move_ids":[…],
//	 "search_text":{id:text},"replace":[{"id","new_id","role","content","raw"}],
//	 "delete_ids":[…],"archive_writes":[{"tier","label","content","reason"}],
//	 "insert":{"id","role","content","created_at","raw"}|null,
//	 "recall_writes":[{"id","role","content","created_at","raw","search_text"}]}
//
// "raw" is a message's exact JSON as a string. now (RFC 3339 or Unix
// milliseconds) defaults to the plug-in's clock. Errors name the commit's
// field ("invalid_input: insert_message.id: is empty").
func (e *Env) PlanCommit(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	cr := root.Get("commit")
	if !cr.Exists() {
		return nil, required("commit")
	}
	if !cr.IsObject() {
		return nil, wrongType("commit", "a compaction_commit input object", cr)
	}
	now, err := decodeNow(root.Get("now"))
	if err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	c, err := DecodeCommit(rawBytes(cr.Raw))
	if err != nil {
		return nil, err
	}
	p, err := core.PlanCommit(&c, now)
	if err != nil {
		return nil, err
	}
	return AppendCommitPlan(make([]byte, 0, len(in)+512), &p), nil
}

// AppendCommitPlan writes a CommitPlan as the planCommit export answers it.
func AppendCommitPlan(b []byte, p *core.CommitPlan) []byte {
	b = append(b, `{"conversation_id":`...)
	b = core.AppendJSONString(b, p.ConversationID)
	b = append(b, `,"operation_id":`...)
	b = core.AppendJSONString(b, p.OperationID)
	b = append(b, `,"now":`...)
	b = core.AppendJSONString(b, p.Now)
	b = append(b, `,"history_owner":`...)
	if p.CallerOwned {
		b = core.AppendJSONString(b, core.OwnerCaller)
	} else {
		b = core.AppendJSONString(b, core.OwnerStore)
	}
	b = append(b, `,"checks":`...)
	b = AppendCommitChecks(b, p.Checks)
	b = append(b, `,"remove_ids":`...)
	b = appendStrings(b, p.RemoveIDs)
	b = append(b, `,"move_ids":`...)
	b = appendStrings(b, p.MoveIDs)
	b = append(b, `,"search_text":`...)
	b = AppendSearchTexts(b, p.SearchText)
	b = append(b, `,"replace":[`...)
	for i := range p.Replace {
		r := &p.Replace[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = core.AppendJSONString(b, r.ID)
		b = append(b, `,"new_id":`...)
		b = core.AppendJSONString(b, r.NewID)
		b = appendRow(b, r.Role, r.Content, nil, r.Raw)
	}
	b = append(b, `],"delete_ids":`...)
	b = appendStrings(b, p.DeleteIDs)
	b = append(b, `,"archive_writes":[`...)
	for i := range p.ArchiveWrites {
		w := &p.ArchiveWrites[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"tier":`...)
		b = core.AppendJSONString(b, w.Tier)
		b = append(b, `,"label":`...)
		b = core.AppendJSONString(b, w.Label)
		b = append(b, `,"content":`...)
		b = core.AppendJSONString(b, w.Content)
		b = append(b, `,"reason":`...)
		b = core.AppendJSONString(b, w.Reason)
		b = append(b, '}')
	}
	b = append(b, `],"insert":`...)
	if p.Insert == nil {
		b = append(b, "null"...)
	} else {
		b = appendStoredMessage(b, p.Insert, false)
	}
	b = append(b, `,"recall_writes":[`...)
	for i := range p.RecallWrites {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStoredMessage(b, &p.RecallWrites[i], true)
	}
	return append(b, "]}"...)
}

// AppendCommitChecks writes a plan's checks, as queries/commit_check.sql
// reads them: [{"field","must","ids":[…]}].
func AppendCommitChecks(b []byte, checks []core.CommitCheck) []byte {
	b = append(b, '[')
	for i := range checks {
		ch := &checks[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"field":`...)
		b = core.AppendJSONString(b, ch.Field)
		b = append(b, `,"must":`...)
		b = core.AppendJSONString(b, ch.Must)
		b = append(b, `,"ids":`...)
		b = appendStrings(b, ch.IDs)
		b = append(b, '}')
	}
	return append(b, ']')
}

// AppendSearchTexts writes search texts as an object of message id to
// text, in order, as queries/move_to_recall.sql reads them.
func AppendSearchTexts(b []byte, texts []core.SearchText) []byte {
	b = append(b, '{')
	for i := range texts {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendJSONString(b, texts[i].MessageID)
		b = append(b, ':')
		b = core.AppendJSONString(b, texts[i].Text)
	}
	return append(b, '}')
}

func appendStoredMessage(b []byte, m *core.StoredMessage, withText bool) []byte {
	b = append(b, `{"id":`...)
	b = core.AppendJSONString(b, m.ID)
	b = appendRow(b, m.Role, m.Content, &m.CreatedAt, m.Raw)
	if withText {
		b = b[:len(b)-1]
		b = append(b, `,"search_text":`...)
		b = core.AppendJSONString(b, m.SearchText)
		b = append(b, '}')
	}
	return b
}

// appendRow writes a row's role, content, created_at (when given) and
// raw, the exact JSON as a string, and closes the object.
func appendRow(b []byte, role, content string, createdAt *string, raw []byte) []byte {
	b = append(b, `,"role":`...)
	b = core.AppendJSONString(b, role)
	b = append(b, `,"content":`...)
	b = core.AppendJSONString(b, content)
	if createdAt != nil {
		b = append(b, `,"created_at":`...)
		b = core.AppendJSONString(b, *createdAt)
	}
	b = append(b, `,"raw":`...)
	b = core.AppendJSONString(b, string(raw))
	return append(b, '}')
}

// ParseBlocks is the parseBlocks export: {contents:[…]} →
// {"blocks":[{"batch":{…}|null,"malformed"?:"…"},…]}, one entry per
// content, in order: what each archived block's content says of itself
// (core.ParseBlock). "batch" is {"operation_id","depth","start_time",
// "end_time","message_count","source_message_ids","method","summary"}
// (the block's row names its conversation); null for a block
// that carries no batch metadata, and then "malformed" says what is wrong
// when its first line is meant as metadata but cannot be read. A host
// reads such a block as a plain one, whole.
func (e *Env) ParseBlocks(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	cs := root.Get("contents")
	if !cs.Exists() {
		return nil, required("contents")
	}
	if !cs.IsArray() {
		return nil, wrongType("contents", "an array of strings", cs)
	}
	b := make([]byte, 0, 16+len(in)+64)
	b = append(b, `{"blocks":[`...)
	i := 0
	cs.ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.String {
			err = wrongType(idx("contents", i), "a string", v)
			return false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendBlockMeta(b, v.Str)
		i++
		return true
	})
	if err != nil {
		return nil, err
	}
	return append(b, "]}"...), nil
}

// AppendBlockMeta writes one entry of parseBlocks' answer for content.
func AppendBlockMeta(b []byte, content string) []byte {
	m, ok, problem := core.ParseBlock(content)
	if !ok {
		b = append(b, `{"batch":null`...)
		if problem != "" {
			b = append(b, `,"malformed":`...)
			b = core.AppendJSONString(b, problem)
		}
		return append(b, '}')
	}
	bt := &m.Batch
	b = append(b, `{"batch":{"operation_id":`...)
	b = core.AppendJSONString(b, bt.OperationID)
	b = appendBatchSpan(b, bt)
	b = append(b, `,"method":`...)
	b = core.AppendJSONString(b, bt.Method)
	b = append(b, `,"summary":`...)
	b = core.AppendJSONString(b, bt.Content)
	return append(b, "}}"...)
}

// DecodeAppend reads the messages a store appends to a conversation
// (messages: a JSON array, any shape of docs/spec.md#message-shapes) as
// the store keeps them: each must have its own id (a store appends by
// id; decodeHistory derives ids for a compress history), ids unique in
// the list, and a conversation_id, when it has one, equal to
// conversationID. Errors name the element ("messages[2].id: is
// required").
func DecodeAppend(conversationID string, messages []byte) ([]core.Message, error) {
	in := make([]byte, 0, len(messages)+16)
	in = append(in, `{"messages":`...)
	in = append(in, messages...)
	in = append(in, '}')
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	return decodeAppend(conversationID, root, nil)
}

func decodeAppend(conversationID string, root object, e *Env) ([]core.Message, error) {
	if conversationID == "" {
		return nil, core.Invalid("conversation_id", "must be a non-empty string")
	}
	if !root.Get("messages").Exists() {
		return nil, required("messages")
	}
	var msgs []core.Message
	var err error
	if e != nil {
		msgs, _, err = e.messages(root, "messages", msgRules{})
	} else {
		msgs, _, err = decodeMessages(root, "messages", msgRules{})
	}
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		m := &msgs[i]
		if m.ID == "" {
			return nil, core.Invalid(idx("messages", i)+".id", "is required (a store keeps messages by id)")
		}
		if m.ConversationID != "" && m.ConversationID != conversationID {
			return nil, core.Invalid(idx("messages", i)+".conversation_id",
				strconv.Quote(m.ConversationID)+" differs from conversation_id "+strconv.Quote(conversationID))
		}
	}
	i, j := core.FirstDuplicate(len(msgs), func(i int) string { return msgs[i].ID })
	if i >= 0 {
		return nil, core.Invalid(idx("messages", i)+".id", "repeats messages["+strconv.Itoa(j)+"].id "+strconv.Quote(msgs[i].ID))
	}
	return msgs, nil
}

// PlanAppend is the planAppend export: {conversation_id, messages} →
// {"messages":[{"id","role","content","created_at"},…]}, one row per
// message, in order (DecodeAppend): what a store writes for each message
// it appends beside the message's JSON, which the host has. "created_at"
// is clipfold's format, or "" when the message has none.
func (e *Env) PlanAppend(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	conv := root.Get("conversation_id")
	if conv.Type != gjson.String {
		return nil, wrongType("conversation_id", "a non-empty string", conv)
	}
	msgs, err := decodeAppend(conv.Str, root, e)
	if err != nil {
		return nil, err
	}
	b := e.outBuffer(16 + 96*len(msgs) + len(in))
	b = append(b, `{"messages":[`...)
	for i := range msgs {
		m := &msgs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendMessageRow(b, m, `""`), '}')
	}
	return append(b, "]}"...), nil
}

// appendMessageRow writes what a store keeps of a message beside its JSON,
// {"id","role","content","created_at" — created_at clipfold's format, or
// noTime when it has none — and leaves the object open for more fields
// (planAppend's rows, decodeHistory's messages).
func appendMessageRow(b []byte, m *core.Message, noTime string) []byte {
	b = append(b, `{"id":`...)
	b = core.AppendJSONString(b, m.ID)
	b = append(b, `,"role":`...)
	b = core.AppendJSONString(b, m.Role.String())
	b = append(b, `,"content":`...)
	b = core.AppendJSONString(b, m.Content)
	b = append(b, `,"created_at":`...)
	if m.HasCreatedAt {
		return core.AppendJSONString(b, core.FormatTime(m.CreatedAt))
	}
	return append(b, noTime...)
}
