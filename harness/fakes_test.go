package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/clipfold/clipfold/core"
)

// memStore is a small in-memory Store with the commit rules of
// docs/spec.md#compaction_commit, used
// where a test needs to see every state change. The real stores
// (hostfuncs/store) run the same scenarios in their own suites.
type memStore struct {
	mu      sync.Mutex
	active  []string // message ids in order
	raw     map[string]string
	recall  map[string]string
	blocks  map[string]core.Block
	order   []string // block ids in creation order
	nextID  int
	commits int
}

func newMemStore(history []json.RawMessage) *memStore {
	s := &memStore{raw: map[string]string{}, recall: map[string]string{}, blocks: map[string]core.Block{}}
	for _, m := range history {
		var v struct{ ID string }
		_ = json.Unmarshal(m, &v)
		s.active = append(s.active, v.ID)
		s.raw[v.ID] = string(m)
	}
	return s
}

func (s *memStore) ListBlocks(_ context.Context, tier, prefix string) ([]core.Block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.Block
	for _, id := range s.order {
		if b := s.blocks[id]; strings.HasPrefix(b.Label, prefix) {
			out = append(out, b)
		}
	}
	return out, nil
}

func (s *memStore) Commit(_ context.Context, c *core.Commit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range c.RemoveMessageIDs {
		if _, ok := s.raw[id]; !ok {
			return &core.Error{Code: "conflict", Msg: "message " + id + " is no longer active"}
		}
	}
	for _, id := range c.ArchiveDeletes {
		if _, ok := s.blocks[id]; !ok {
			return &core.Error{Code: "conflict", Msg: "block " + id + " no longer exists"}
		}
	}
	for _, w := range c.ArchiveWrites {
		s.nextID++
		id := fmt.Sprintf("b%d", s.nextID)
		s.blocks[id] = core.Block{ID: id, Label: w.Label, Content: w.Content}
		s.order = append(s.order, id)
	}
	for _, id := range c.ArchiveDeletes {
		delete(s.blocks, id)
		for i, o := range s.order {
			if o == id {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
	}
	gone := map[string]bool{}
	for _, id := range c.RemoveMessageIDs {
		s.recall[id] = s.raw[id]
		delete(s.raw, id)
		gone[id] = true
	}
	kept := []string{c.Insert.ID}
	for _, id := range s.active {
		if !gone[id] {
			kept = append(kept, id)
		}
	}
	s.active = kept
	// The clip-archive as compress returned it (insert_raw), as the real
	// stores keep it; without one, the native Message.
	ins, _ := json.Marshal(map[string]string{"id": c.Insert.ID, "conversation_id": c.Insert.ConversationID,
		"role": "system", "content": c.Insert.Content, "created_at": core.FormatTime(c.Insert.CreatedAt)})
	if len(c.InsertRaw) > 0 {
		ins = c.InsertRaw
	}
	s.raw[c.Insert.ID] = string(ins)
	s.commits++
	return nil
}

// dump is the whole state, deterministic, for before/after comparisons.
func (s *memStore) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "active=%v\n", s.active)
	keys := func(m map[string]string) []string {
		var k []string
		for x := range m {
			k = append(k, x)
		}
		sort.Strings(k)
		return k
	}
	for _, k := range keys(s.raw) {
		fmt.Fprintf(&b, "raw %s=%s\n", k, s.raw[k])
	}
	for _, k := range keys(s.recall) {
		fmt.Fprintf(&b, "recall %s=%s\n", k, s.recall[k])
	}
	for _, id := range s.order {
		fmt.Fprintf(&b, "block %s %s=%q\n", id, s.blocks[id].Label, s.blocks[id].Content)
	}
	return b.String()
}

// activeHistory is the active history as a JSON array.
func (s *memStore) activeHistory() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := make([]string, len(s.active))
	for i, id := range s.active {
		parts[i] = s.raw[id]
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}
