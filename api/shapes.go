package api

import (
	"strconv"
	"strings"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// Message shapes (docs/spec.md#message-shapes): each message is read as the
// shapes it fits, and a call's messages must share one. A plain message (role,
// string content, ids) fits every shape and takes none of the work below: it
// never leaves the walker's fast path (plainMember, key's common cases). What
// is particular to a shape narrows the message's fits:
//
//	OpenAI Chat   tool_calls [{id, function {name, arguments}}], tool_call_id,
//	              parts text, image_url, input_audio, file, refusal; roles developer, function
//	Anthropic     blocks text, tool_use {id, name, input}, tool_result
//	              {tool_use_id, content}, image, document, thinking
//	Responses     items {type: message | function_call | function_call_output |
//	              reasoning | custom_tool_call[_output] | other *_call[_output]},
//	              parts input_text, output_text, input_image, input_file; role developer
//	AI SDK        parts text, tool-call {toolCallId, toolName, input|args},
//	              tool-result {toolCallId, toolName, output|result}, image, file, reasoning
//	LangChain     type human | ai | system | tool (then the content may hold any
//	              provider's blocks), tool_calls [{name, args, id}], tool_call_id,
//	              blocks text, image, file, reasoning, tool_call
//
// A role "tool" is not Anthropic or Responses. Text parts, tool inputs
// and tool outputs become the message's Content and ToolCalls (see
// core.Message); image, document, file and audio parts count as a short
// placeholder ("[image]"); reasoning and thinking count nothing.

// What a message fits when it has …
const (
	chatLC           = core.ShapeChat | core.ShapeLangChain
	toolRoleShapes   = core.ShapeChat | core.ShapeAISDK | core.ShapeLangChain // role "tool"
	toolCallIDShapes = chatLC                                                 // tool_call_id
)

// shapeScratch is the per-message state of shape decoding: fits, the
// shapes the message fits so far; seen, which members below it has (0
// for a plain message, which then skips finishShape).
type shapeScratch struct {
	fits                core.Shape
	seen                uint8
	typ, callID, name   string
	args, input, output gjson.Result
	partsContent        string // the Content the content parts made
	texts, outs         []string
}

const (
	seenType = 1 << iota
	seenCallID
	seenName
	seenArgs
	seenInput
	seenOutput
	seenParts
)

// role reads a role that is not one of the four of docs/spec.md#message, or is
// (key's path).
func (d *msgDecoder) role(s string) {
	r, ok := core.ParseRole(s)
	switch {
	case ok:
	case s == "developer": // OpenAI's newer name for system instructions
		r = core.RoleSystem
		d.fits &= core.ShapeChat | core.ShapeResponses
	case s == "function": // OpenAI Chat's legacy function results
		r = core.RoleTool
		d.fits &= core.ShapeChat
	default:
		d.err = core.Invalid(d.path(".role"), "must be one of user, assistant, system, tool, got "+strconv.Quote(clip(s, 40)))
		return
	}
	if r == core.RoleTool {
		d.fits &= toolRoleShapes
	}
	d.m.Role, d.hasRole = r, true
}

// shapeMember keeps a top-level member that only some shapes have, for
// finishShape.
func (d *msgDecoder) shapeMember(k string, val *gjson.Result) {
	str := func(bit uint8, dst *string) {
		switch val.Type {
		case gjson.String:
			*dst = val.Str
			d.seen |= bit
		case gjson.Null:
		default:
			d.err = wrongType(d.path("."+k), "a string", *val)
		}
	}
	switch k {
	case "type":
		str(seenType, &d.typ)
	case "call_id":
		str(seenCallID, &d.callID)
	case "name":
		if val.Type == gjson.String { // a Chat participant name is not ours to check
			d.name = val.Str
			d.seen |= seenName
		}
	case "arguments":
		d.args = *val
		d.seen |= seenArgs
	case "input":
		d.input = *val
		d.seen |= seenInput
	case "output":
		d.output = *val
		d.seen |= seenOutput
	}
}

// parts reads a content-part (block) array into the message: text parts,
// placeholders, tool calls and tool results. Content is the results'
// outputs, then the text parts, joined with "\n".
func (d *msgDecoder) parts(v *gjson.Result) {
	m := d.m
	if d.seen&seenParts != 0 {
		d.err = core.Invalid(d.path(".content"), "is given twice")
		return
	}
	d.seen |= seenParts
	d.texts, d.outs = d.texts[:0], d.outs[:0]
	i := 0
	v.ForEach(func(_, p gjson.Result) bool {
		switch {
		case p.Type == gjson.String:
			d.texts = append(d.texts, p.Str)
		case p.IsObject():
			d.part(&p)
		default:
			d.err = wrongType(d.path(".content["+strconv.Itoa(i)+"]"), "a content part object", p)
			return false
		}
		i++
		return true
	})
	if d.err != nil {
		return
	}
	n := len(d.outs) + len(d.texts)
	switch n {
	case 0:
		m.Content = ""
	case 1:
		if len(d.outs) == 1 {
			m.Content = d.outs[0]
		} else {
			m.Content = d.texts[0]
		}
	default:
		size := n - 1
		for _, s := range d.outs {
			size += len(s)
		}
		for _, s := range d.texts {
			size += len(s)
		}
		m.Content = joinParts(d.outs, d.texts, size)
	}
	d.partsContent = m.Content
}

// joinParts joins outs then texts with "\n" into one string of size
// bytes.
func joinParts(outs, texts []string, size int) string {
	b := make([]byte, 0, size)
	first := true
	for _, list := range [2][]string{outs, texts} {
		for _, s := range list {
			if !first {
				b = append(b, '\n')
			}
			b = append(b, s...)
			first = false
		}
	}
	return string(b)
}

// Placeholders for parts that carry no text.
const (
	placeholderImage    = "[image]"
	placeholderDocument = "[document]"
	placeholderFile     = "[file]"
	placeholderAudio    = "[audio]"
	placeholderMedia    = "[media]"
)

// partFields are the members of a content part the shapes use, read in
// one pass over the part (a gjson Get per member would walk it again for
// each).
type partFields struct {
	typ, text, id, name, input, toolUseID, content, toolCallID, toolName, args, output, result, refusal gjson.Result
}

func (f *partFields) read(p *gjson.Result) {
	p.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			f.typ = v
		case "text":
			f.text = v
		case "id":
			f.id = v
		case "name":
			f.name = v
		case "input":
			f.input = v
		case "tool_use_id":
			f.toolUseID = v
		case "content":
			f.content = v
		case "toolCallId":
			f.toolCallID = v
		case "toolName":
			f.toolName = v
		case "args":
			f.args = v
		case "output":
			f.output = v
		case "result":
			f.result = v
		case "refusal":
			f.refusal = v
		}
		return true
	})
}

// part reads one content part object.
func (d *msgDecoder) part(p *gjson.Result) {
	var f partFields
	f.read(p)
	if f.typ.Type != gjson.String { // no type: a text part if it has text
		if f.text.Type == gjson.String {
			d.texts = append(d.texts, f.text.Str)
		}
		return
	}
	text := func(t *gjson.Result, fits core.Shape) {
		d.fits &= fits
		if t.Type == gjson.String {
			d.texts = append(d.texts, t.Str)
		}
	}
	holder := func(s string, fits core.Shape) {
		d.fits &= fits
		d.texts = append(d.texts, s)
		addMedia(&d.m.Media)
	}
	const (
		A, C, R, V, L = core.ShapeAnthropic, core.ShapeChat, core.ShapeResponses, core.ShapeAISDK, core.ShapeLangChain
	)
	switch f.typ.Str {
	case "text":
		text(&f.text, C|A|V|L)
	case "input_text", "output_text":
		text(&f.text, R)
	case "refusal":
		text(&f.refusal, C|R)
	case "image":
		holder(placeholderImage, A|V|L)
	case "image_url":
		holder(placeholderImage, C|L)
	case "input_image":
		holder(placeholderImage, R)
	case "document":
		holder(placeholderDocument, A)
	case "file":
		holder(placeholderFile, C|V|L)
	case "input_file":
		holder(placeholderFile, R)
	case "input_audio":
		holder(placeholderAudio, C)
	case "audio":
		holder(placeholderAudio, L)
	case "media":
		holder(placeholderMedia, V)
	case "thinking", "redacted_thinking":
		d.fits &= A
	case "reasoning":
		d.fits &= V | L
	case "tool_use", "server_tool_use":
		d.fits &= A
		d.addCall(f.id.String(), f.name.String(), argsText(f.input))
	case "tool_result":
		d.fits &= A
		d.addResult(f.toolUseID.String(), "", outputText(f.content, &d.m.Media))
	case "tool-call":
		d.fits &= V
		args := f.input
		if !args.Exists() {
			args = f.args
		}
		d.addCall(f.toolCallID.String(), f.toolName.String(), argsText(args))
	case "tool-result":
		d.fits &= V
		d.addResult(f.toolCallID.String(), f.toolName.String(), aiSDKOutput(f.output, f.result, &d.m.Media))
	case "tool_call": // LangChain's standard block
		d.fits &= L
		d.addCall(f.id.String(), f.name.String(), argsText(f.args))
	}
	// Any other part (a provider's own block) is kept, not counted.
}

// addCall adds a tool call, once per id (a LangChain message can carry a
// call both as a content block and in tool_calls).
func (d *msgDecoder) addCall(id, name, args string) {
	m := d.m
	if id != "" {
		for i := range m.ToolCalls {
			if tc := &m.ToolCalls[i]; !tc.Result && tc.ID == id {
				m.HasToolCalls = true
				return
			}
		}
	}
	m.ToolCalls = append(m.ToolCalls, core.ToolCall{ID: id, Name: name, Arguments: args})
	m.HasToolCalls = true
}

// addResult adds a tool result carried as a part, once per call id.
func (d *msgDecoder) addResult(id, name, output string) {
	m := d.m
	if id != "" {
		for i := range m.ToolCalls {
			if tc := &m.ToolCalls[i]; tc.Result && tc.ID == id {
				return
			}
		}
	}
	m.ToolCalls = append(m.ToolCalls, core.ToolCall{ID: id, Name: name, Arguments: output, Result: true})
	m.HasResults = true
	d.outs = append(d.outs, output)
}

// toolCalls reads a top-level tool_calls: OpenAI Chat's
// [{id, type, function {name, arguments}}] or LangChain's
// [{name, args, id}]. Any JSON is accepted (docs/spec.md#message: present and
// non-null/non-empty means "has tool calls"); calls that are not objects
// are counted but carry no name.
func (d *msgDecoder) toolCalls(v *gjson.Result) {
	m := d.m
	switch {
	case v.Type == gjson.Null || v.Type == gjson.False:
	case v.Type == gjson.String:
		m.HasToolCalls = m.HasToolCalls || v.Str != ""
	case v.IsObject():
		has := false
		v.ForEach(func(_, _ gjson.Result) bool { has = true; return false })
		if has {
			d.toolCall(v)
		}
	case v.IsArray():
		v.ForEach(func(_, c gjson.Result) bool {
			d.toolCall(&c)
			return true
		})
	default:
		m.HasToolCalls = true
	}
}

func (d *msgDecoder) toolCall(c *gjson.Result) {
	if !c.IsObject() {
		d.addCall("", "tool", c.Raw)
		return
	}
	fn := c.Get("function")
	name := fn.Get("name")
	if !name.Exists() {
		name = c.Get("name")
	}
	args := fn.Get("arguments")
	if fn.Exists() {
		d.fits &= chatLC
	} else if a := c.Get("args"); a.Exists() {
		d.fits &= core.ShapeLangChain
		args = a
	}
	if !args.Exists() {
		args = c.Get("arguments")
	}
	if !args.Exists() {
		args = c.Get("input")
	}
	d.addCall(c.Get("id").String(), name.String(), argsText(args))
}

// finishShape settles a message that has members particular to a shape:
// Responses items and LangChain types decide their role, Responses calls
// and outputs their tool parts; a user turn of tool results alone is a
// tool message.
func (d *msgDecoder) finishShape() error {
	m := d.m
	if d.seen&seenParts != 0 && m.Content != d.partsContent {
		return core.Invalid(d.path(".content"), "is given twice")
	}
	if d.seen&seenType != 0 {
		const R, L = core.ShapeResponses, core.ShapeLangChain
		setRole := func(r core.Role) { m.Role, d.hasRole = r, true }
		switch t := d.typ; t {
		case "message":
			d.fits &= R
		case "function_call", "custom_tool_call":
			d.fits &= R
			setRole(core.RoleAssistant)
			d.itemCall(d.member(seenName, d.name))
		case "function_call_output", "custom_tool_call_output":
			d.fits &= R
			setRole(core.RoleTool)
			d.itemOutput()
		case "reasoning":
			d.fits &= R
			setRole(core.RoleAssistant)
			m.JoinNext = true
		// A LangChain message: its content may hold any provider's blocks
		// (a ChatAnthropic reply keeps its tool_use blocks).
		case "human":
			d.fits = L
			setRole(core.RoleUser)
		case "ai":
			d.fits = L
			setRole(core.RoleAssistant)
		case "system":
			d.fits = L
			setRole(core.RoleSystem)
		case "tool":
			d.fits = L
			setRole(core.RoleTool)
		default:
			if d.hasRole {
				break // a type of its own with a role: the role decides
			}
			// Another Responses item (web_search_call, mcp_call,
			// local_shell_call_output, item_reference, …).
			d.fits &= R
			if strings.HasSuffix(t, "_output") {
				setRole(core.RoleTool)
				d.itemOutput()
			} else {
				setRole(core.RoleAssistant)
				if d.seen&seenCallID != 0 {
					name := t
					if d.seen&seenName != 0 {
						name = d.name
					}
					d.itemCall(name)
				}
			}
		}
	}
	if m.HasResults && m.Role == core.RoleUser && m.Text() == "" {
		m.Role = core.RoleTool
	}
	if d.fits == 0 {
		return core.Invalid(d.path(""), "mixes members or parts of different message shapes")
	}
	return nil
}

// member is a string member kept by shapeMember, "" unless this message
// has it (the scratch outlives the message).
func (d *msgDecoder) member(bit uint8, s string) string {
	if d.seen&bit == 0 {
		return ""
	}
	return s
}

// itemCall makes a Responses call item's tool call.
func (d *msgDecoder) itemCall(name string) {
	args := d.args
	if d.seen&seenArgs == 0 {
		args = gjson.Result{}
		if d.seen&seenInput != 0 {
			args = d.input
		}
	}
	d.addCall(d.member(seenCallID, d.callID), name, argsText(args))
}

// itemOutput makes a Responses output item a tool message answering
// call_id, its output the content.
func (d *msgDecoder) itemOutput() {
	m := d.m
	m.ToolCallID = d.member(seenCallID, d.callID)
	out := gjson.Result{}
	if d.seen&seenOutput != 0 {
		out = d.output
	}
	m.Content = outputText(out, &m.Media)
}

// narrow intersects the shapes so far with the message's, or fails
// naming the message when they share none.
func (d *msgDecoder) narrow() error {
	if d.mask&d.fits == 0 {
		if d.rules.shape != 0 {
			return core.Invalid(d.path(""), "is "+d.fits.Describe()+", not "+d.rules.shape.String()+" (the input's shape)")
		}
		return core.Invalid(d.path(""), "is "+d.fits.Describe()+", but "+idx(d.field, d.narrowed)+" is "+
			d.mask.Describe()+": one message shape per call")
	}
	d.mask &= d.fits
	d.narrowed = d.i
	return nil
}

// argsText is a tool call's arguments as text: a string as it is, other
// JSON as written, nothing as "".
func argsText(v gjson.Result) string {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return ""
	case v.Type == gjson.String:
		return v.Str
	}
	return v.Raw
}

// addMedia counts one image, document, file or audio part (up to 255).
func addMedia(n *uint8) {
	if *n < 255 {
		*n++
	}
}

// outputText is a tool result's output as text: a string as it is, an
// array of parts as their text (partsText), other JSON as written. The
// media parts among them are counted into media.
func outputText(v gjson.Result, media *uint8) string {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return ""
	case v.Type == gjson.String:
		return v.Str
	case v.IsArray():
		return partsText(v, media)
	}
	return v.Raw
}

// partsText is the text of the parts inside a tool result: text parts
// and placeholders joined with "\n".
func partsText(v gjson.Result, media *uint8) string {
	var b []byte
	v.ForEach(func(_, p gjson.Result) bool {
		var s string
		switch {
		case p.Type == gjson.String:
			s = p.Str
		case p.IsObject():
			text := false
			switch ty := p.Get("type").String(); ty {
			case "", "text", "input_text", "output_text":
				t := p.Get("text")
				if t.Type != gjson.String {
					return true
				}
				s, text = t.Str, true
			case "image", "image_url", "input_image":
				s = placeholderImage
			case "document":
				s = placeholderDocument
			case "file", "input_file":
				s = placeholderFile
			case "audio", "input_audio":
				s = placeholderAudio
			case "media":
				s = placeholderMedia
			default:
				return true
			}
			if !text {
				addMedia(media)
			}
		default:
			return true
		}
		if b != nil {
			b = append(b, '\n')
		} else {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s...)
		return true
	})
	return string(b)
}

// aiSDKOutput is an AI SDK tool-result part's output as text: output
// {type: text | error-text, value} its value, {type: json | error-json,
// value} the value's JSON, {type: content, value: parts} their text, an
// output of another form as written; without output, the older result
// (a string as it is, other JSON as written).
func aiSDKOutput(out, result gjson.Result, media *uint8) string {
	if !out.Exists() {
		return argsText(result)
	}
	if out.IsObject() {
		val := out.Get("value")
		switch out.Get("type").String() {
		case "text", "error-text":
			return argsText(val)
		case "json", "error-json":
			if !val.Exists() {
				return ""
			}
			return val.Raw
		case "content":
			return outputText(val, media)
		}
	}
	return argsText(out)
}
