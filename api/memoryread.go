package api

import (
	"strconv"

	"github.com/clipfold/clipfold/core"
	"github.com/tidwall/gjson"
)

// BuildMemoryRead is the buildMemoryRead export: {query, hits,
// max_tokens?, by_id?, config?} → {"text","tokens","whole":[…],
// "passage":id|null,"left_out":[…]}, memory_read's answer for a model
// within max_tokens (default core.DefaultMemoryReadTokens) as
// core.BuildMemoryRead words it (by_id true: records the agent asked for
// by id, core.BuildMemoryReadByID). hits are a search's hits, best first, as the stores give them:
// kind ("message" or "batch"), id, text, and optionally role, score,
// start_time, end_time (else created_at), in_context and a batch's
// source_message_ids; other fields are ignored.
func (e *Env) BuildMemoryRead(in []byte) ([]byte, error) {
	root, err := parseInput(in)
	if err != nil {
		return nil, err
	}
	cfg, err := e.config(root)
	if err != nil {
		return nil, err
	}
	query, err := requiredString(root, "query")
	if err != nil {
		return nil, err
	}
	maxTokens, err := optInt(root.Get("max_tokens"), "max_tokens", core.DefaultMemoryReadTokens, core.MinMemoryReadTokens)
	if err != nil {
		return nil, err
	}
	byID := false
	if b := root.Get("by_id"); b.Exists() && b.Type != gjson.Null {
		if b.Type != gjson.True && b.Type != gjson.False {
			return nil, wrongType("by_id", "true or false", b)
		}
		byID = b.Type == gjson.True
	}
	hits, err := decodeReadHits(root.Get("hits"))
	if err != nil {
		return nil, err
	}
	build := core.BuildMemoryRead
	if byID {
		build = core.BuildMemoryReadByID
	}
	r, err := build(query, hits, maxTokens, &cfg)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 96+len(r.Text)+32*len(hits))
	b = append(b, `{"text":`...)
	b = core.AppendJSONString(b, r.Text)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(r.Tokens), 10)
	b = append(b, `,"whole":`...)
	b = appendStrings(b, r.Whole)
	b = append(b, `,"passage":`...)
	if r.Passage == "" {
		b = append(b, "null"...)
	} else {
		b = core.AppendJSONString(b, r.Passage)
	}
	b = append(b, `,"left_out":`...)
	b = appendStrings(b, r.LeftOut)
	return append(b, '}'), nil
}

// decodeReadHits reads buildMemoryRead's hits; errors name the field
// (hits[2].kind).
func decodeReadHits(r gjson.Result) ([]core.ReadHit, error) {
	if !r.Exists() {
		return nil, required("hits")
	}
	if !r.IsArray() {
		return nil, wrongType("hits", "an array of search hits", r)
	}
	var out []core.ReadHit
	var err error
	r.ForEach(func(_, v gjson.Result) bool {
		f := "hits[" + strconv.Itoa(len(out)) + "]"
		if !v.IsObject() {
			err = wrongType(f, "a search hit (an object)", v)
			return false
		}
		var h core.ReadHit
		switch k := v.Get("kind"); {
		case !k.Exists():
			err = required(f + ".kind")
		case k.Type != gjson.String || (k.Str != "message" && k.Str != "batch"):
			err = core.Invalid(f+".kind", `must be "message" or "batch", got `+typeName(k))
		default:
			h.Kind = k.Str
		}
		if err != nil {
			return false
		}
		for _, s := range []struct {
			name     string
			dst      *string
			required bool
		}{{"id", &h.ID, true}, {"text", &h.Text, true}, {"role", &h.Role, false},
			{"start_time", &h.Start, false}, {"end_time", &h.End, false}} {
			x := v.Get(s.name)
			if s.required && !x.Exists() {
				err = required(f + "." + s.name)
				return false
			}
			if *s.dst, err = optString(x, f+"."+s.name); err != nil {
				return false
			}
		}
		if h.Start == "" && h.End == "" {
			if h.End, err = optString(v.Get("created_at"), f+".created_at"); err != nil {
				return false
			}
		}
		if s := v.Get("score"); s.Exists() && s.Type != gjson.Null {
			if s.Type != gjson.Number {
				err = wrongType(f+".score", "a number", s)
				return false
			}
			h.Score = s.Num
		}
		if c := v.Get("in_context"); c.Exists() && c.Type != gjson.Null {
			if c.Type != gjson.True && c.Type != gjson.False {
				err = wrongType(f+".in_context", "true or false", c)
				return false
			}
			h.InContext = c.Type == gjson.True
		}
		if src := v.Get("source_message_ids"); src.Exists() && src.Type != gjson.Null {
			if !src.IsArray() {
				err = wrongType(f+".source_message_ids", "an array of ids", src)
				return false
			}
			src.ForEach(func(_, id gjson.Result) bool {
				if id.Type != gjson.String {
					err = wrongType(f+".source_message_ids["+strconv.Itoa(len(h.Sources))+"]", "a string", id)
					return false
				}
				h.Sources = append(h.Sources, id.Str)
				return true
			})
			if err != nil {
				return false
			}
		}
		out = append(out, h)
		return true
	})
	return out, err
}
