package api

import (
	"errors"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// hostPorts binds core's ports to the host functions of
// docs/spec.md#host-functions.
type hostPorts struct{ h HostCaller }

// hostOutput checks a host function's output and returns its root,
// turning an {"error":…} object into an error.
func hostOutput(name string, out []byte, err error) (gjson.Result, error) {
	if err != nil {
		return gjson.Result{}, errors.New(name + ": " + err.Error())
	}
	if !gjson.ValidBytes(out) {
		return gjson.Result{}, errors.New(name + " returned invalid JSON")
	}
	r := gjson.ParseBytes(out)
	if !r.IsObject() {
		return gjson.Result{}, errors.New(name + " returned " + typeName(r) + ", not an object")
	}
	return r, nil
}

func (p hostPorts) Complete(req *core.ModelRequest) (core.ModelResponse, error) {
	out, err := p.h.CallHost("llm_complete", AppendModelRequest(nil, req))
	r, err := hostOutput("llm_complete", out, err)
	if err != nil {
		return core.ModelResponse{}, err
	}
	resp, le, err := decodeModelOutcome(r)
	if err != nil {
		return resp, errors.New("llm_complete returned a malformed response: " + err.Error())
	}
	if le != nil {
		return resp, le
	}
	return resp, nil
}

func (p hostPorts) List(tier, prefix string) ([]core.Block, error) {
	in := append([]byte(`{"tier":`), nil...)
	in = core.AppendJSONString(in, tier)
	in = append(in, `,"label_prefix":`...)
	in = core.AppendJSONString(in, prefix)
	in = append(in, '}')
	out, err := p.h.CallHost("memory_list", in)
	r, err := hostOutput("memory_list", out, err)
	if err != nil {
		return nil, err
	}
	if e := r.Get("error"); e.Exists() && e.Type != gjson.Null {
		le := decodeLLMError(e)
		return nil, errors.New(le.Code + ": " + le.Message)
	}
	return decodeBlocks(r)
}

func (p hostPorts) Commit(c *core.Commit) error {
	out, err := p.h.CallHost("compaction_commit", AppendCommit(nil, c))
	r, err := hostOutput("compaction_commit", out, err)
	if err != nil {
		return err
	}
	if e := r.Get("error"); e.Exists() && e.Type != gjson.Null {
		le := decodeLLMError(e)
		if le.Code == core.ErrConflict.Code {
			return &core.Error{Code: core.ErrConflict.Code, Msg: le.Message}
		}
		return errors.New(le.Code + ": " + le.Message)
	}
	if !r.Get("ok").Bool() {
		return errors.New(`compaction_commit answered neither {"ok":true} nor an error`)
	}
	return nil
}

// decodeBlocks reads memory_list's output {"blocks":[{id,label,content}]}.
func decodeBlocks(r gjson.Result) ([]core.Block, error) {
	bl := r.Get("blocks")
	if !bl.IsArray() {
		return nil, errors.New(`memory_list output needs "blocks": an array`)
	}
	var out []core.Block
	var err error
	bl.ForEach(func(_, v gjson.Result) bool {
		id, label, content := v.Get("id"), v.Get("label"), v.Get("content")
		if id.Type != gjson.String || label.Type != gjson.String || content.Type != gjson.String {
			err = errors.New("memory_list: every block needs string id, label and content")
			return false
		}
		out = append(out, core.Block{ID: keep(id.Str), Label: keep(label.Str), Content: keep(content.Str)})
		return true
	})
	return out, err
}

// AppendBlocks writes memory_list's output.
func AppendBlocks(b []byte, blocks []core.Block) []byte {
	b = append(b, `{"blocks":[`...)
	for i := range blocks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = core.AppendJSONString(b, blocks[i].ID)
		b = append(b, `,"label":`...)
		b = core.AppendJSONString(b, blocks[i].Label)
		b = append(b, `,"content":`...)
		b = core.AppendJSONString(b, blocks[i].Content)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// AppendCommit writes compaction_commit's input
// (docs/spec.md#compaction_commit).
func AppendCommit(b []byte, c *core.Commit) []byte {
	b = append(b, `{"conversation_id":`...)
	b = core.AppendJSONString(b, c.ConversationID)
	b = append(b, `,"operation_id":`...)
	b = core.AppendJSONString(b, c.OperationID)
	b = append(b, `,"archive_writes":[`...)
	for i, w := range c.ArchiveWrites {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"label":`...)
		b = core.AppendJSONString(b, w.Label)
		b = append(b, `,"content":`...)
		b = core.AppendJSONString(b, w.Content)
		b = append(b, `,"tier":`...)
		b = core.AppendJSONString(b, w.Tier)
		b = append(b, `,"reason":`...)
		b = core.AppendJSONString(b, w.Reason)
		b = append(b, '}')
	}
	b = append(b, `],"archive_deletes":`...)
	b = appendStrings(b, c.ArchiveDeletes)
	b = append(b, `,"remove_message_ids":`...)
	b = appendStrings(b, c.RemoveMessageIDs)
	b = append(b, `,"insert_message":`...)
	if c.NoInsert {
		b = append(b, "null"...)
	} else {
		b = AppendInsertMessage(b, &c.Insert)
	}
	if c.SearchText != nil {
		b = append(b, `,"search_text":{`...)
		for i := range c.SearchText {
			if i > 0 {
				b = append(b, ',')
			}
			b = core.AppendJSONString(b, c.SearchText[i].MessageID)
			b = append(b, ':')
			b = core.AppendJSONString(b, c.SearchText[i].Text)
		}
		b = append(b, '}')
	}
	if c.InsertRaw != nil {
		b = append(b, `,"insert_raw":`...)
		b = append(b, c.InsertRaw...)
	}
	if c.HistoryOwner != "" {
		b = append(b, `,"history_owner":`...)
		b = core.AppendJSONString(b, c.HistoryOwner)
	}
	if len(c.ReplaceMessages) > 0 {
		b = append(b, `,"replace_messages":[`...)
		for i := range c.ReplaceMessages {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendReplaceMessage(b, &c.ReplaceMessages[i])
		}
		b = append(b, ']')
	}
	if c.HistoryOwner == core.OwnerCaller {
		b = append(b, `,"recall_writes":[`...)
		for i := range c.RecallWrites {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRecallWrite(b, &c.RecallWrites[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendReplaceMessage writes one entry of replace_messages: {id,
// new_id, role, content, message}, message the replacement's exact JSON.
func appendReplaceMessage(b []byte, r *core.ReplaceMessage) []byte {
	b = append(b, `{"id":`...)
	b = core.AppendJSONString(b, r.ID)
	b = append(b, `,"new_id":`...)
	b = core.AppendJSONString(b, r.NewID)
	b = append(b, `,"role":`...)
	b = core.AppendJSONString(b, r.Role.String())
	b = append(b, `,"content":`...)
	b = core.AppendJSONString(b, r.Content)
	b = append(b, `,"message":`...)
	b = append(b, r.Raw...)
	return append(b, '}')
}

// appendRecallWrite writes one recall write: {id, role, content,
// created_at, search_text, message}, message the exact JSON.
func appendRecallWrite(b []byte, w *core.RecallWrite) []byte {
	b = append(b, `{"id":`...)
	b = core.AppendJSONString(b, w.ID)
	b = append(b, `,"role":`...)
	b = core.AppendJSONString(b, w.Role.String())
	b = append(b, `,"content":`...)
	b = core.AppendJSONString(b, w.Content)
	b = append(b, `,"created_at":`...)
	if w.CreatedAt.IsZero() {
		b = append(b, "null"...)
	} else {
		b = core.AppendJSONString(b, core.FormatTime(w.CreatedAt))
	}
	b = append(b, `,"search_text":`...)
	b = core.AppendJSONString(b, w.SearchText)
	b = append(b, `,"message":`...)
	b = append(b, w.Raw...)
	return append(b, '}')
}

// DecodeCommit reads compaction_commit's input, for Go hosts.
func DecodeCommit(in []byte) (core.Commit, error) {
	var c core.Commit
	root, err := parseInput(in)
	if err != nil {
		return c, err
	}
	conv := root.Get("conversation_id")
	if !conv.Exists() {
		return c, required("conversation_id")
	}
	if conv.Type != gjson.String || conv.Str == "" {
		return c, core.Invalid("conversation_id", "must be a non-empty string")
	}
	c.ConversationID = conv.Str
	if c.OperationID, err = optString(root.Get("operation_id"), "operation_id"); err != nil {
		return c, err
	}
	if c.ArchiveWrites, err = decodeEach(root, "archive_writes", decodeArchiveWrite); err != nil {
		return c, err
	}
	if c.ArchiveDeletes, err = decodeEach(root, "archive_deletes", decodeID); err != nil {
		return c, err
	}
	if c.RemoveMessageIDs, err = decodeEach(root, "remove_message_ids", decodeID); err != nil {
		return c, err
	}
	im := root.Get("insert_message")
	if im.Type == gjson.Null && im.Exists() {
		c.NoInsert = true
	} else if !im.IsObject() {
		return c, required("insert_message")
	}
	if !c.NoInsert {
		if c, err = decodeInsert(root, im, c); err != nil {
			return c, err
		}
	}
	switch o := root.Get("history_owner"); {
	case o.Type == gjson.Null, o.Type == gjson.String && o.Str == core.OwnerStore:
		c.HistoryOwner = core.OwnerStore
	case o.Type == gjson.String && o.Str == core.OwnerCaller:
		c.HistoryOwner = core.OwnerCaller
	default:
		return c, core.Invalid("history_owner", `must be "store" or "caller"`)
	}
	if c.RecallWrites, err = decodeEach(root, "recall_writes", decodeRecallWrite); err != nil {
		return c, err
	}
	if st := root.Get("search_text"); st.Exists() && st.Type != gjson.Null {
		if !st.IsObject() {
			return c, wrongType("search_text", "an object of message id to text", st)
		}
		st.ForEach(func(k, v gjson.Result) bool {
			if v.Type != gjson.String {
				err = wrongType("search_text."+k.Str, "a string", v)
				return false
			}
			c.SearchText = append(c.SearchText, core.SearchText{MessageID: k.Str, Text: v.Str})
			return true
		})
		if err != nil {
			return c, err
		}
	}
	if c.ReplaceMessages, err = decodeEach(root, "replace_messages", decodeReplaceMessage); err != nil {
		return c, err
	}
	return c, nil
}

// decodeEach reads root's array field with dec, each element named
// field[i] in errors; absent or null is none.
func decodeEach[T any](root object, field string, dec func(gjson.Result, string) (T, error)) ([]T, error) {
	r := root.Get(field)
	if !r.Exists() || r.Type == gjson.Null {
		return nil, nil
	}
	if !r.IsArray() {
		return nil, wrongType(field, "an array", r)
	}
	var out []T
	var err error
	i := 0
	r.ForEach(func(_, v gjson.Result) bool {
		var x T
		if x, err = dec(v, idx(field, i)); err == nil {
			out = append(out, x)
		}
		i++
		return err == nil
	})
	return out, err
}

// decodeArchiveWrite reads one entry of a commit's archive_writes: a
// string label, and content, tier and reason strings when present.
func decodeArchiveWrite(v gjson.Result, f string) (core.ArchiveWrite, error) {
	var w core.ArchiveWrite
	if !v.IsObject() {
		return w, wrongType(f, "an archive write object", v)
	}
	label := v.Get("label")
	if label.Type != gjson.String {
		return w, wrongType(f+".label", "a string", label)
	}
	w.Label = label.Str
	var err error
	for _, s := range [...]struct {
		to   *string
		name string
	}{{&w.Content, "content"}, {&w.Tier, "tier"}, {&w.Reason, "reason"}} {
		if *s.to, err = optString(v.Get(s.name), f+"."+s.name); err != nil {
			return w, err
		}
	}
	w.Tier = orStr(w.Tier, "archival")
	return w, nil
}

// decodeID reads one id of archive_deletes or remove_message_ids.
func decodeID(v gjson.Result, f string) (string, error) {
	if v.Type != gjson.String {
		return "", wrongType(f, "a string", v)
	}
	return v.Str, nil
}

// decodeInsert reads a commit's insert_message (and insert_raw) into c.
func decodeInsert(root object, im gjson.Result, c core.Commit) (core.Commit, error) {
	var err error
	c.Insert = core.InsertMessage{ID: im.Get("id").String(), ConversationID: orStr(im.Get("conversation_id").String(), c.ConversationID),
		Role: core.RoleSystem}
	if c.Insert.Content, err = optString(im.Get("content"), "insert_message.content"); err != nil {
		return c, err
	}
	if r := im.Get("role"); r.Exists() && r.Type != gjson.Null {
		var ok bool
		if c.Insert.Role, ok = core.ParseRole(r.String()); !ok || r.Type != gjson.String {
			return c, core.Invalid("insert_message.role", "must be one of user, assistant, system, tool")
		}
	}
	if t := im.Get("created_at"); t.Exists() && t.Type != gjson.Null {
		if c.Insert.CreatedAt, err = core.ParseTime(t.String()); err != nil {
			return c, core.Invalid("insert_message.created_at", "must be an RFC 3339 time")
		}
	}
	if c.Insert.ID == "" {
		return c, required("insert_message.id")
	}
	if raw := root.Get("insert_raw"); raw.Exists() && raw.Type != gjson.Null {
		if !raw.IsObject() {
			return c, wrongType("insert_raw", "a message object", raw)
		}
		c.InsertRaw = []byte(raw.Raw)
	}
	return c, nil
}

// decodeReplaceMessage reads one entry of a commit's replace_messages.
func decodeReplaceMessage(v gjson.Result, f string) (core.ReplaceMessage, error) {
	var r core.ReplaceMessage
	if !v.IsObject() {
		return r, wrongType(f, "a replacement object", v)
	}
	id, newID, role, content, msg := v.Get("id"), v.Get("new_id"), v.Get("role"), v.Get("content"), v.Get("message")
	if id.Type != gjson.String || id.Str == "" {
		return r, required(f + ".id")
	}
	if newID.Type != gjson.String || newID.Str == "" {
		return r, required(f + ".new_id")
	}
	ro, ok := core.ParseRole(role.String())
	if !ok {
		return r, core.Invalid(f+".role", "must be one of user, assistant, system, tool")
	}
	if content.Type != gjson.String {
		return r, wrongType(f+".content", "a string", content)
	}
	if !msg.IsObject() {
		return r, wrongType(f+".message", "the replacement message object", msg)
	}
	return core.ReplaceMessage{ID: id.Str, NewID: newID.Str, Role: ro, Content: content.Str, Raw: []byte(msg.Raw)}, nil
}

// decodeRecallWrite reads one entry of a commit's recall_writes.
func decodeRecallWrite(v gjson.Result, f string) (core.RecallWrite, error) {
	var w core.RecallWrite
	if !v.IsObject() {
		return w, wrongType(f, "a recall write object", v)
	}
	id, role, content, msg := v.Get("id"), v.Get("role"), v.Get("content"), v.Get("message")
	if id.Type != gjson.String || id.Str == "" {
		return w, required(f + ".id")
	}
	r, ok := core.ParseRole(role.String())
	if !ok {
		return w, core.Invalid(f+".role", "must be one of user, assistant, system, tool")
	}
	if content.Exists() && content.Type != gjson.String && content.Type != gjson.Null {
		return w, wrongType(f+".content", "a string", content)
	}
	if !msg.IsObject() {
		return w, wrongType(f+".message", "the message object", msg)
	}
	w = core.RecallWrite{ID: id.Str, Role: r, Content: content.Str, SearchText: v.Get("search_text").String(), Raw: []byte(msg.Raw)}
	if t := v.Get("created_at"); t.Type == gjson.String {
		var err error
		if w.CreatedAt, err = core.ParseTime(t.Str); err != nil {
			return w, core.Invalid(f+".created_at", "must be an RFC 3339 time")
		}
	}
	return w, nil
}

func orStr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
