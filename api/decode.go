package api

import (
	"runtime"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// copyMessages is whether decoded messages get their own copy of their
// bytes (see msgDecoder.decode).
const copyMessages = runtime.Compiler != "gc"

// rawBytes views a gjson Raw (a substring of the input) as bytes without
// copying. The bytes are only ever read.
func rawBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func idx(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

func required(field string) error { return core.Invalid(field, "is required") }

func wrongType(field, want string, got gjson.Result) error {
	return core.Invalid(field, "must be "+want+", got "+typeName(got))
}

// requiredString is root's field, which must be a string.
func requiredString(root object, field string) (string, error) {
	v := root.Get(field)
	if !v.Exists() {
		return "", required(field)
	}
	if v.Type != gjson.String {
		return "", wrongType(field, "a string", v)
	}
	return v.Str, nil
}

// msgRules says which optional Message fields a caller insists on, and
// the shape the messages must have when the input names one (0: any).
type msgRules struct {
	needID, needTime bool
	shape            core.Shape
}

// decodeMessages reads an array of Messages in any of the shapes of
// docs/spec.md#message-shapes, one shape per call (the input's "shape", when
// given, names it). Each element keeps its exact bytes in Raw. It returns the
// shape the messages are written in, settled (core.SettleShape).
//
// Hot path: one closure serves every message and field paths are built
// only on error, so decoding allocates per message only what the message
// itself needs (TinyGo's collector, in particular, pays for every
// allocation on large histories).
func decodeMessages(o object, key string, rules msgRules) ([]core.Message, core.HistoryShape, error) {
	return decodeMessagesInto(nil, nil, o, key, rules)
}

// decodeMessagesInto is decodeMessages into buf when it is large enough
// (buf is empty and zero up to its capacity), copying the messages'
// bytes into a when they are copied (see arena).
func decodeMessagesInto(buf []core.Message, a *arena, o object, key string, rules msgRules) ([]core.Message, core.HistoryShape, error) {
	if err := readShape(o, &rules); err != nil {
		return nil, core.HistoryShape{}, err
	}
	r, n := o.array(key)
	d := msgDecoder{field: key, rules: rules, buf: buf, arena: a}
	msgs, err := d.decodeArray(r, n, copyMessages)
	fits := d.mask
	if err != nil {
		return msgs, core.HistoryShape{}, err
	}
	return msgs, core.SettleShape(msgs, fits), nil
}

// readShape reads the input's optional "shape": the one message shape
// the messages are in (docs/spec.md#message-shapes), for histories whose
// messages fit several (plain role and string content) but belong to one: an
// Anthropic history of text turns, whose clip-archive must be a user turn.
func readShape(o object, rules *msgRules) error {
	v := o.Get("shape")
	switch v.Type {
	case gjson.Null:
		return nil
	case gjson.String:
		if v.Str == "" || v.Str == "auto" {
			return nil
		}
		if s, ok := core.ParseShape(v.Str); ok {
			rules.shape = s
			return nil
		}
		return core.Invalid("shape", "must be one of auto, "+core.ShapeNames()+", got "+strconv.Quote(clip(v.Str, 40)))
	}
	return wrongType("shape", "a string", v)
}

// decodeMessagesCopy is decodeMessages with each message copied out of
// the input (own), into a when it is not nil, or not; tests run every
// way on any compiler.
//
// Messages are decoded in place, into the slice, and the walker hands
// values over by pointer: under standard Go's Wasm every copy of a
// Message (144 bytes) or a gjson.Result (80 bytes) is a memory.copy that
// wazero runs as a call into the host's memmove, and those copies were
// 15% of a 10k-message split.
//
// n is the number of elements when the scanner counted them (else -1):
// the slice is made that long at once, neither grown nor oversized.
func decodeMessagesCopy(r gjson.Result, n int, field string, rules msgRules, own bool, a *arena) ([]core.Message, error) {
	d := msgDecoder{field: field, rules: rules, arena: a}
	return d.decodeArray(r, n, own)
}

func (d *msgDecoder) decodeArray(r gjson.Result, n int, own bool) ([]core.Message, error) {
	field := d.field
	d.startArray()
	if !r.Exists() {
		return nil, required(field)
	}
	if !r.IsArray() {
		return nil, wrongType(field, "an array of messages", r)
	}
	if n < 0 {
		n = len(r.Raw)/256 + 8 // a guess: append grows it if short
	}
	msgs := d.buf
	if msgs == nil || cap(msgs) < n {
		msgs = make([]core.Message, 0, n)
	}
	s := r.Raw
	j := skipWS(s, 0)
	if at(s, j) != '[' {
		return decodeMessagesGJSON(r, d, msgs[:0])
	}
	j = skipWS(s, j+1)
	if at(s, j) == ']' {
		return msgs, nil
	}
	for i := 0; ; i++ {
		d.i = i
		// A new element, zero: make and append hand out zeroed memory,
		// and this loop never shrinks the slice.
		if len(msgs) < cap(msgs) {
			msgs = msgs[:len(msgs)+1]
		} else {
			msgs = append(msgs, core.Message{})
		}
		end, err := d.decodeAt(s, j, own, &msgs[i])
		if end < 0 {
			return decodeMessagesGJSON(r, d, msgs[:0])
		}
		if err != nil {
			return msgs[:i], err
		}
		if j = end; at(s, j) <= ' ' { // see walkObject
			j = skipWS(s, j)
		}
		switch at(s, j) {
		case ',':
			if j++; at(s, j) <= ' ' {
				j = skipWS(s, j)
			}
		case ']':
			return msgs, nil
		default:
			return decodeMessagesGJSON(r, d, msgs[:0])
		}
	}
}

// decodeMessagesGJSON is decodeMessages through gjson's ForEach: the
// reference the walker is fuzzed against, and its fallback for text it
// does not expect (none that scanInput accepts).
func decodeMessagesGJSON(r gjson.Result, d *msgDecoder, msgs []core.Message) ([]core.Message, error) {
	i := 0
	d.err = nil
	d.startArray()
	r.ForEach(func(_, v gjson.Result) bool {
		d.i = i
		var m core.Message
		if err := d.decode(v, &m); err != nil {
			d.err = err
			return false
		}
		msgs = append(msgs, m)
		i++
		return true
	})
	return msgs, d.err
}

type msgDecoder struct {
	buf            []core.Message // empty, zero up to its capacity: decodeArray's slice when large enough
	arena          *arena         // where messages' bytes are copied (copyMessages), or nil
	field          string         // the array's path
	i              int            // index in it
	rules          msgRules
	m              *core.Message // the message being decoded
	v              gjson.Result  // the walker's current member value
	hasRole, hasID bool
	err            error

	// mask is the shapes every message so far fits (the input's shape
	// when it names one); narrowed the last message that narrowed it.
	mask     core.Shape
	narrowed int
	shapeScratch
}

// startArray resets the shape state for a new pass over the array.
func (d *msgDecoder) startArray() {
	d.mask, d.narrowed = core.AnyShape, -1
	if d.rules.shape != 0 {
		d.mask = d.rules.shape
	}
}

// startMessage resets the per-message state before decoding into m.
func (d *msgDecoder) startMessage(m *core.Message) {
	d.hasRole, d.hasID, d.err, d.m = false, false, nil, m
	d.fits, d.seen = core.AnyShape, 0
}

// path is the current message's field path plus sub, built on error only.
func (d *msgDecoder) path(sub string) string { return idx(d.field, d.i) + sub }

// decodeAt decodes the message whose text starts at s[start] into m, which
// is zero, and returns the index after it; end is -1 when the text is not
// as expected.
func (d *msgDecoder) decodeAt(s string, start int, own bool, m *core.Message) (end int, err error) {
	if at(s, start) != '{' {
		end = skipValue(s, start)
		if end < 0 {
			return -1, nil
		}
		return end, d.decode(gjson.Parse(s[start:end]), m)
	}
	d.startMessage(m)
	end, ok := walkObject(s, start, d)
	if !ok {
		return -1, nil
	}
	err = d.check() // it may add tool calls (finishShape): rebase after it
	if own {        // see decode
		m.Raw = d.arena.copy(s[start:end])
		rebase(m, s[start:end], m.Raw)
	} else {
		m.Raw = rawBytes(s[start:end])
	}
	return end, err
}

// rebase points every string of m that views old, the message's text in
// the input, at the same bytes of cp, old's copy: decoding from the input
// and copying afterwards finds the message's end in the same pass
// (copying first needed a pass of its own). Strings that do not view old
// (unescaped, joined) stay. decodeOneWay (walk_test.go) checks every
// string field of every copied message, by reflection, on every walker
// seed and fuzz input, so a new field cannot be missed.
func rebase(m *core.Message, old string, cp []byte) {
	if len(old) == 0 || len(cp) != len(old) {
		return
	}
	lo := uintptr(unsafe.Pointer(unsafe.StringData(old)))
	hi := lo + uintptr(len(old))
	base := unsafe.Pointer(unsafe.SliceData(cp))
	rebaseString(&m.ID, lo, hi, base)
	rebaseString(&m.ConversationID, lo, hi, base)
	rebaseString(&m.Content, lo, hi, base)
	rebaseString(&m.ToolCallID, lo, hi, base)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		rebaseString(&tc.ID, lo, hi, base)
		rebaseString(&tc.Name, lo, hi, base)
		rebaseString(&tc.Arguments, lo, hi, base)
	}
}

func rebaseString(s *string, lo, hi uintptr, base unsafe.Pointer) {
	if len(*s) == 0 {
		return
	}
	if p := uintptr(unsafe.Pointer(unsafe.StringData(*s))); p >= lo && p < hi {
		*s = unsafe.String((*byte)(unsafe.Add(base, p-lo)), len(*s))
	}
}

// decode decodes the message v into m.
func (d *msgDecoder) decode(v gjson.Result, m *core.Message) error {
	d.startMessage(m)
	if !v.IsObject() {
		*m = core.Message{Raw: rawBytes(v.Raw)}
		return wrongType(d.path(""), "a message object", v)
	}
	// Under TinyGo each message gets its own copy of its bytes, and its
	// strings point into that copy, not into the multi-megabyte input: a
	// collector that finds an object's head by walking back from an
	// interior pointer (TinyGo's does, 64 bytes a step) then walks a
	// message, not the input. Go's collector finds heads in constant time,
	// so there the messages point into the input, saving a copy of it and
	// an allocation per message.
	raw := rawBytes(v.Raw)
	if copyMessages {
		raw = d.arena.copy(v.Raw)
	}
	*m = core.Message{Raw: raw}
	gjson.Parse(bytesToString(raw)).ForEach(func(k, v gjson.Result) bool {
		return d.key(k.Str, &v)
	})
	return d.check()
}

// check finishes the message just decoded and returns its error: a
// field's, a required field missing, or a shape that does not match the
// messages before it.
func (d *msgDecoder) check() error {
	if d.err != nil {
		return d.err
	}
	if d.seen != 0 {
		if err := d.finishShape(); err != nil {
			return err
		}
	}
	if !d.hasRole {
		return required(d.path(".role"))
	}
	if d.rules.needID && !d.hasID {
		return required(d.path(".id"))
	}
	if d.rules.needTime && !d.m.HasCreatedAt {
		return required(d.path(".created_at"))
	}
	d.m.Shapes = d.fits
	if d.mask&^d.fits != 0 {
		return d.narrow()
	}
	return nil
}

// key decodes one member of the current message.
func (d *msgDecoder) key(k string, val *gjson.Result) bool {
	m := d.m
	switch k {
	case "id":
		switch val.Type {
		case gjson.String:
			m.ID, d.hasID = val.Str, val.Str != ""
		case gjson.Null:
		default:
			d.err = wrongType(d.path(".id"), "a string", *val)
		}
	case "conversation_id":
		switch val.Type {
		case gjson.String:
			m.ConversationID = val.Str
		case gjson.Null:
		default:
			d.err = wrongType(d.path(".conversation_id"), "a string", *val)
		}
	case "role":
		if val.Type != gjson.String {
			d.err = wrongType(d.path(".role"), "one of user, assistant, system, tool", *val)
			break
		}
		d.role(val.Str)
	case "content":
		switch {
		case val.Type == gjson.String: // the common case, without the call
			m.Content = val.Str
		case val.Type == gjson.Null:
			m.Content = ""
		case val.IsArray():
			d.parts(val)
		default:
			d.err = wrongType(d.path(".content"), "a string or an array of content parts", *val)
		}
	case "tool_calls":
		d.toolCalls(val)
	case "tool_call_id":
		switch val.Type {
		case gjson.String:
			m.ToolCallID = val.Str
			d.fits &= toolCallIDShapes
		case gjson.Null:
		default:
			d.err = wrongType(d.path(".tool_call_id"), "a string", *val)
		}
	case "type", "call_id", "name", "arguments", "input", "output":
		d.shapeMember(k, val)
	case "created_at":
		switch val.Type {
		case gjson.Null:
		case gjson.String:
			t, perr := core.ParseTime(val.Str)
			if perr != nil {
				d.err = core.Invalid(d.path(".created_at"), "must be an RFC 3339 time like 2026-02-28T10:00:00.000Z, got "+strconv.Quote(clip(val.Str, 64)))
				break
			}
			m.CreatedAt, m.HasCreatedAt = t, true
		default:
			d.err = wrongType(d.path(".created_at"), "an RFC 3339 time string", *val)
		}
	case "pinned":
		switch val.Type {
		case gjson.True:
			m.Pinned = true
		case gjson.False, gjson.Null:
		default:
			d.err = wrongType(d.path(".pinned"), "true or false", *val)
		}
	}
	return d.err == nil
}

// decodeContent reads a string, or a content-part array whose text parts
// are joined with "\n"; null or absent is "".
func decodeContent(v gjson.Result, field string, a *arena) (string, error) {
	switch {
	case v.Type == gjson.String:
		return a.keep(v.Str), nil
	case v.Type == gjson.Null:
		return "", nil
	case v.IsArray():
		var out []byte
		first := true
		var err error
		i := 0
		v.ForEach(func(_, p gjson.Result) bool {
			var text string
			switch {
			case p.Type == gjson.String:
				text = p.Str
			case p.IsObject():
				t := p.Get("text")
				if t.Type != gjson.String {
					i++
					return true // image, tool_use, …: no text to join
				}
				if ty := p.Get("type"); ty.Exists() && ty.Str != "text" {
					i++
					return true
				}
				text = t.Str
			default:
				err = wrongType(idx(field, i), "a content part object", p)
				return false
			}
			if !first {
				out = append(out, '\n')
			}
			out = append(out, text...)
			first = false
			i++
			return true
		})
		return string(out), err
	}
	return "", wrongType(field, "a string or an array of content parts", v)
}

// clip shortens s to about n bytes for an error message, cutting on a
// code-point boundary so the message stays valid UTF-8.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// decodeConfig overlays a call's config object on base. Unknown keys are
// reported through warn and ignored.
func decodeConfig(r gjson.Result, base *core.Config, warn func(string)) (core.Config, error) {
	c := *base // the keyword lists and matcher are immutable, so shared
	if !r.Exists() || r.Type == gjson.Null {
		return c, nil
	}
	if !r.IsObject() {
		return c, wrongType("config", "an object", r)
	}
	var err error
	r.ForEach(func(k, v gjson.Result) bool {
		field := "config." + k.Str
		if e := c.Set(k.Str, toValue(v), field); e != nil {
			if e == core.ErrUnknownKey {
				if warn != nil {
					warn(field + ": unknown key ignored")
				}
				return true
			}
			err = e
			return false
		}
		return true
	})
	return c, err
}

// toValue maps a JSON value to core's format-neutral Value.
func toValue(v gjson.Result) core.Value {
	switch v.Type {
	case gjson.Null:
		return core.Value{Kind: core.KindNull}
	case gjson.String:
		return core.Value{Kind: core.KindString, Str: v.Str}
	case gjson.Number:
		return core.Value{Kind: core.KindNumber, Num: v.Num}
	case gjson.True:
		return core.Value{Kind: core.KindBool, Bool: true}
	case gjson.False:
		return core.Value{Kind: core.KindBool}
	}
	if v.IsArray() {
		list := []string{}
		ok := true
		v.ForEach(func(_, e gjson.Result) bool {
			if e.Type != gjson.String {
				ok = false
				return false
			}
			list = append(list, e.Str)
			return true
		})
		if ok {
			return core.Value{Kind: core.KindStrings, List: list}
		}
	}
	return core.Value{Kind: core.KindOther}
}

// decodeUsage reads the optional "usage" input of shouldCompact, split
// and compress (docs/spec.md#counting-tokens-and-the-window):
// {"input_tokens": N ≥ 0, "messages": K}, K at most n (the history's
// length); absent or null is no usage.
func decodeUsage(r gjson.Result, n int) (core.Usage, error) {
	if r.Type == gjson.Null {
		return core.Usage{}, nil
	}
	if !r.IsObject() {
		return core.Usage{}, wrongType("usage", `an object {"input_tokens": N, "messages": K}`, r)
	}
	var it, ms gjson.Result
	r.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			it = v
		case "messages":
			ms = v
		}
		return true
	})
	if !it.Exists() {
		return core.Usage{}, required("usage.input_tokens")
	}
	if !ms.Exists() {
		return core.Usage{}, required("usage.messages")
	}
	tokens, err := optInt(it, "usage.input_tokens", 0, 0)
	if err != nil {
		return core.Usage{}, err
	}
	if it.Type == gjson.Null {
		return core.Usage{}, core.Invalid("usage.input_tokens", "must be an integer ≥ 0, got null")
	}
	k, err := optInt(ms, "usage.messages", 0, 0)
	if err != nil {
		return core.Usage{}, err
	}
	if ms.Type == gjson.Null {
		return core.Usage{}, core.Invalid("usage.messages", "must be an integer ≥ 0, got null")
	}
	if k > n {
		return core.Usage{}, core.Invalid("usage.messages", "is "+strconv.Itoa(k)+", beyond the history's "+strconv.Itoa(n)+" messages")
	}
	return core.Usage{InputTokens: tokens, Messages: k, Set: true}, nil
}

// optString reads an optional string field ("" when absent or null).
func optString(r gjson.Result, field string) (string, error) {
	switch r.Type {
	case gjson.Null:
		return "", nil
	case gjson.String:
		return r.Str, nil
	}
	return "", wrongType(field, "a string or null", r)
}

// optInt reads an optional integer field ≥ min; def when absent or null.
func optInt(r gjson.Result, field string, def, min int) (int, error) {
	if r.Type == gjson.Null {
		return def, nil
	}
	if r.Type != gjson.Number || r.Num != float64(int64(r.Num)) {
		return 0, core.Invalid(field, "must be an integer ≥ "+strconv.Itoa(min)+", got "+typeName(r))
	}
	if r.Num < float64(min) || r.Num > core.MaxInt {
		return 0, core.Invalid(field, "must be an integer ≥ "+strconv.Itoa(min)+", got "+r.Raw)
	}
	return int(r.Num), nil
}

// decodeBatches reads Batch objects (docs/spec.md#batch). As for messages,
// each batch is read in one pass over its members, one closure serves the
// whole array, a field path is built on error only, and the strings a batch
// keeps are its own (keep): 200,000 batches decode in linear time under
// TinyGo's collector. n is the number of batches when the input scanner
// counted them (else -1): the slice is made that long at once.
func decodeBatches(r gjson.Result, n int, field string, a *arena) ([]core.Batch, error) {
	if !r.Exists() {
		return nil, required(field)
	}
	if !r.IsArray() {
		return nil, wrongType(field, "an array of batches", r)
	}
	out := make([]core.Batch, 0, max(n, 0))
	d := batchDecoder{arena: a}
	d.init()
	r.ForEach(func(_, v gjson.Result) bool {
		i := len(out)
		out = append(out, core.Batch{})
		if d.decode(v, &out[i]) {
			return true
		}
		d.err.Field = idx(field, i) + d.err.Field
		out = out[:i]
		return false
	})
	if d.err != nil {
		return out, d.err
	}
	return out, nil
}

// batchDecoder reads one batch at a time. Its errors' Field is the
// member's path relative to the batch (".content"), or "" for the batch.
type batchDecoder struct {
	arena  *arena // where kept strings are copied (see arena)
	b      *core.Batch
	times  uint8 // the required times seen: 1 start_time, 2 end_time
	err    *core.Error
	member func(k, v gjson.Result) bool // d.readMember, bound once
	id     func(_, v gjson.Result) bool // appends a source message id
}

func (d *batchDecoder) init() {
	d.member = d.readMember
	d.id = func(_, v gjson.Result) bool {
		d.b.SourceMessageIDs = append(d.b.SourceMessageIDs, d.arena.keep(v.String()))
		return true
	}
}

// decode reads v into b, which is zero, and reports whether it is valid.
func (d *batchDecoder) decode(v gjson.Result, b *core.Batch) bool {
	d.b, d.times, d.err = b, 0, nil
	if !v.IsObject() {
		d.err = core.Invalid("", "must be a batch object, got "+typeName(v))
		return false
	}
	v.ForEach(d.member)
	switch {
	case d.err != nil:
	case d.times&1 == 0:
		d.err = core.Invalid(".start_time", "is required")
	case d.times&2 == 0:
		d.err = core.Invalid(".end_time", "is required")
	}
	return d.err == nil
}

func (d *batchDecoder) readMember(k, v gjson.Result) bool {
	b := d.b
	var err error
	switch k.Str {
	case "content":
		if v.Type != gjson.Null && v.Type != gjson.String {
			err = core.Invalid(".content", "must be a string or null, got "+typeName(v))
		}
		b.Content = d.arena.keep(v.Str)
	case "depth":
		b.Depth, err = optInt(v, ".depth", 0, 0)
	case "message_count":
		b.MessageCount, err = optInt(v, ".message_count", 0, 0)
	case "start_time":
		b.Start, err = d.time(v, 1, ".start_time")
	case "end_time":
		b.End, err = d.time(v, 2, ".end_time")
	case "source_message_ids":
		switch {
		case v.IsArray():
			v.ForEach(d.id)
		case v.Type != gjson.Null:
			err = core.Invalid(".source_message_ids", "must be an array of strings, got "+typeName(v))
		}
	case "operation_id":
		b.OperationID = d.arena.keep(v.String())
	case "method":
		b.Method = d.arena.keep(v.String())
	}
	if err != nil {
		d.err = err.(*core.Error)
		return false
	}
	return true
}

// time reads a required time member (null counts as absent).
func (d *batchDecoder) time(v gjson.Result, bit uint8, field string) (time.Time, error) {
	switch v.Type {
	case gjson.Null:
		return time.Time{}, nil
	case gjson.String:
	default:
		return time.Time{}, core.Invalid(field, "must be an RFC 3339 time string, got "+typeName(v))
	}
	tm, err := core.ParseTime(v.Str)
	if err != nil {
		return tm, core.Invalid(field, "must be an RFC 3339 time like 2026-02-28T10:00:00.000Z, got "+strconv.Quote(clip(v.Str, 64)))
	}
	d.times |= bit
	return tm, nil
}
