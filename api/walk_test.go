package api

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

func walkSeeds() []string {
	return []string{
		`{"messages":[]}`,
		`{"messages":[ ]}`,
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":"a \"quoted\" \\ word\u00e9","id":"m1"} , {"role":"assistant","content":null}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"ok"},"raw",{"type":"image"}]}]}`,
		`{"messages":[{"role":"user","content":"x","created_at":"2026-02-28T10:00:00.000Z","pinned":true,"conversation_id":"c"}]}`,
		`{"messages":[1,{"role":"user"}]}`,
		`{"messages":[{"role":"robot"}]}`,
		`{"messages":[{"role":"user","role":"assistant","content":"dup"}]}`,
		`{"messages":[{"content":"no role"}]}`,
		`{"messages":[{"role":"user","pinned":"yes"}]}`,
		`{"messages":[{"role":"user","created_at":"yesterday"}]}`,
		`{"messages":[{"ro\u006ce":"user","content":-1.5e3}]}`,
		`{"messages":[{"role":"user","extra":{"deep":[[{"a":"]}"}]]},"content":"after"}]}`,
		`{"messages":[{"role":"user","content":"\\\\"},{"role":"user","content":"tail\\\""}]}`,
		"{\"messages\":[\n\t{\"role\" : \"user\" ,\r\n \"content\" : \"ws\" }\n]}",
		`{"messages":{"role":"user"}}`,
		`{"messages":"nope"}`,
		`{"messages":[{"role":"user","tool_calls":[]},{"role":"user","x":[[],[1,[]]]}],"after":[1,2,3]}`,
		`{"messages":[{"role":"user","content":"a long content string of more than forty-eight bytes, with \"escapes\" too","id":"an id"},{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"x\": \"an argument\"}"}}],"content":"after a container"}]}`,
		`{"messages":[{"\u0072ole":"user","content":"escaped key"},{"role":"user","con\"tent":"odd key","content":"\u00e9"}]}`,
		`{"before":[[]],"messages":[ {"role":"user"} ,{"role":"tool","content":[]}],"empty":[]}`,
		// Names plainMember tells apart by length and first and last eight
		// bytes, near misses, escaped and empty keys.
		`{"messages":[{"role":"user","conversation_id":"c","tool_call_id":"t","created_at":"2026-02-28T10:00:00Z","conversation_idx":"no","conversatio":"no","a_key_longer_than_sixteen":"?"}]}`,
		`{"messages":[{"rol\u0065":"user","conversation\u005fid":"escaped in the second word","tool_call_i\u0064":"x"}]}`,
		`{"messages":[{"content":"k","role":"user","contenT":"case","conten":"short","content_":"long"}]}`,
		`{"messages":[{"role":"user","":"empty key","\"":"a quote"}]}`,
		// Message shapes (docs/spec.md#message-shapes).
		`{"messages":[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t1","name":"f","input":{"x":[1,{"y":"z"}]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"r"},{"type":"image"}]},{"type":"text","text":"q?"}]}]}`,
		`{"messages":[{"type":"reasoning","id":"rs"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"o"}]},{"type":"message","role":"developer","content":"d"},{"type":"x_call","call_id":"k"}]}`,
		`{"messages":[{"role":"assistant","content":[{"type":"tool-call","toolCallId":"a","toolName":"t","args":{}}]},{"role":"tool","content":[{"type":"tool-result","toolCallId":"a","output":{"type":"json","value":[1]}},{"type":"tool-result","toolCallId":"a","result":"dup"}]}]}`,
		`{"messages":[{"type":"ai","content":[{"type":"tool_use","id":"i","input":{}}],"tool_calls":[{"name":"n","args":{"a":"\u00e9"},"id":"i"}]},{"type":"tool","tool_call_id":"i","content":"x"},{"type":"human","content":"h"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}],"content":"twice"},{"role":"tool","content":[{"type":"tool-result"}]}]}`,
		`{"messages":[{"role":"user","content":"[Context Summary — x]"},{"role":"function","content":"f"},{"type":7}]}`,
	}
}

// decodeBoth decodes in's messages with the walker and with gjson.
func decodeBoth(t *testing.T, in string, rules msgRules) {
	o, ok := scanInput([]byte(in))
	if !ok {
		return
	}
	r, n := o.array("messages")
	if r.IsArray() { // the scanner's count is the array's length
		count := 0
		r.ForEach(func(_, _ gjson.Result) bool { count++; return true })
		if n != count {
			t.Fatalf("%.200q: scanner counted %d messages, gjson %d", in, n, count)
		}
	} else if n != -1 {
		t.Fatalf("%.200q: scanner counted %d elements of a non-array", in, n)
	}
	for _, own := range []bool{false, true} {
		for _, hint := range []int{n, -1} {
			decodeOneWay(t, in, o, r, hint, rules, own, nil)
		}
	}
	// Copied into an arena, as under TinyGo: chunks are reused from one
	// decode to the next, so a decode that reads another's bytes fails.
	testArena.reset()
	decodeOneWay(t, in, o, r, n, rules, true, &testArena)
}

// testArena is the arena decodeOneWay's arena runs share.
var testArena arena

// decodeOneWay compares the walker, copying messages (own) or not, with
// gjson's ForEach.
func decodeOneWay(t *testing.T, in string, o object, r gjson.Result, n int, rules msgRules, own bool, a *arena) {
	got, gotErr := decodeMessagesCopy(r, n, "messages", rules, own, a)
	var d msgDecoder
	want, wantErr := []any(nil), error(nil)
	if r.Exists() && r.IsArray() {
		d = msgDecoder{field: "messages", rules: rules}
		w, err := decodeMessagesGJSON(r, &d, nil)
		wantErr = err
		if err == nil {
			for _, m := range w {
				want = append(want, m)
			}
		}
	} else {
		_, _, wantErr = decodeMessages(o, "messages", rules) // not the walker's path
	}
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%.200q (copying %v): walker error %v, gjson error %v", in, own, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	var g []any
	for _, m := range got {
		g = append(g, m)
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("%.200q (copying %v): walker decoded\n%+v\ngjson decoded\n%+v", in, own, g, want)
	}
	if own {
		for i := range got {
			if f := viewInto(reflect.ValueOf(got[i]), r.Raw, "messages["+strconv.Itoa(i)+"]"); f != "" {
				t.Fatalf("%.200q: copied message's %s still views the input", in, f)
			}
		}
	}
}

// viewInto returns the path of the first string or byte slice in v, a
// decoded value, whose bytes lie in text, or "".
func viewInto(v reflect.Value, text string, path string) string {
	lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	hi := lo + uintptr(len(text))
	in := func(p unsafe.Pointer, n int) bool {
		return n > 0 && uintptr(p) >= lo && uintptr(p) < hi
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); in(unsafe.Pointer(unsafe.StringData(s)), len(s)) {
			return path
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if in(v.UnsafePointer(), v.Len()) {
				return path
			}
			return ""
		}
		for i := 0; i < v.Len(); i++ {
			if f := viewInto(v.Index(i), text, path+"["+strconv.Itoa(i)+"]"); f != "" {
				return f
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := viewInto(v.Field(i), text, path+"."+v.Type().Field(i).Name); f != "" {
				return f
			}
		}
	}
	return ""
}

func TestWalkerMatchesGJSON(t *testing.T) {
	for _, s := range walkSeeds() {
		for _, rules := range []msgRules{{}, {needID: true, needTime: true}} {
			decodeBoth(t, s, rules)
		}
	}
}

// FuzzDecodeMessages holds the walker to gjson's ForEach: the same
// messages, byte for byte, and the same errors.
func FuzzDecodeMessages(f *testing.F) {
	for _, s := range walkSeeds() {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, strict bool) {
		decodeBoth(t, in, msgRules{needID: strict, needTime: strict})
	})
}

// TestStringEnd: quotes and backslashes in every lane of the eight-byte
// words, escaped quotes across word boundaries.
func TestStringEnd(t *testing.T) {
	ref := func(s string) (int, bool) { // byte by byte
		esc := false
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case '"':
				return j + 1, esc
			case '\\':
				esc = true
				j++
			}
		}
		return -1, esc
	}
	var cases []string
	for n := 0; n < 20; n++ {
		body := strings.Repeat("a", n)
		cases = append(cases, `"`+body+`"x`, `"`+body+`\"b"`, `"`+body+`\\"`, `"`+body+`\\\"c"`, `"`+body+`é\u00e9"`, `"`+body)
	}
	for _, c := range cases {
		gotEnd, gotEsc := stringEnd(c, 0)
		wantEnd, wantEsc := ref(c)
		if gotEnd != wantEnd || (gotEnd >= 0 && gotEsc != wantEsc) {
			t.Errorf("stringEnd(%q) = %d, %v; want %d, %v", c, gotEnd, gotEsc, wantEnd, wantEsc)
		}
	}
}

// TestMemberNames holds plainMember's constants to the names they stand
// for, and checks that no other name of a message member, nor a name one
// byte off, takes their path.
func TestMemberNames(t *testing.T) {
	for _, tc := range []struct {
		name       string
		head, tail uint64
	}{
		{"id", nameID, 0},
		{"role", nameRole, 0},
		{"content", nameContent, 0},
		{"created_at", nameCreatedAt, nameCreatedAtEnd},
		{"conversation_id", nameConversationID, nameConversationIDEnd},
		{"tool_call_id", nameToolCallID, nameToolCallIDEnd},
	} {
		if h := head8(tc.name); h != tc.head {
			t.Errorf("head8(%q) = %#x, the constant is %#x", tc.name, h, tc.head)
		}
		if len(tc.name) > 8 {
			if tl := tail8(tc.name); tl != tc.tail {
				t.Errorf("tail8(%q) = %#x, the constant is %#x", tc.name, tl, tc.tail)
			}
		}
		var m core.Message
		d := msgDecoder{m: &m}
		value := "user" // a valid role
		if tc.name == "created_at" {
			value = "2026-02-28T10:00:00.000Z"
		}
		if !d.plainMember(tc.name, value) {
			t.Errorf("plainMember(%q) went the general way", tc.name)
		}
		// Same length, one byte changed anywhere: not this member.
		for i := range len(tc.name) {
			b := []byte(tc.name)
			b[i] ^= 0x20
			d := msgDecoder{m: &core.Message{}}
			if d.plainMember(string(b), value) {
				t.Errorf("plainMember(%q) took %q's path", b, tc.name)
			}
		}
		for _, other := range []string{tc.name[:len(tc.name)-1], tc.name + "x", "x" + tc.name} {
			d := msgDecoder{m: &core.Message{}}
			if d.plainMember(other, value) {
				t.Errorf("plainMember(%q) took %q's path", other, tc.name)
			}
		}
	}
	for _, name := range []string{"", "pinned", "tool_calls", "name", "type", "conversation"} {
		d := msgDecoder{m: &core.Message{}}
		if d.plainMember(name, "x") {
			t.Errorf("plainMember(%q) = true, want the general way", name)
		}
	}
}
