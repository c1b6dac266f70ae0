package harness_test

import (
	"time"

	"github.com/clipfold/clipfold/core"
)

type timeAlias = time.Time

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func durMinutes(m int) time.Duration { return time.Duration(m) * time.Minute }

// addBlock puts an archival block straight into the store, as a previous
// compaction (or another conversation's) would have left it.
func (s *memStore) addBlock(label, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := "pre" + string(rune('a'+s.nextID))
	s.blocks[id] = core.Block{ID: id, Label: label, Content: content}
	s.order = append(s.order, id)
}
