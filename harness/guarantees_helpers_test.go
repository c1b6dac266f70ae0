package harness_test

import (
	"fmt"

	"github.com/clipfold/clipfold/core"
)

// addBlock puts an archival block straight into the store, as a previous
// compaction (or another conversation's) would have left it.
func (s *memStore) addBlock(label, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := fmt.Sprintf("pre%d", s.nextID)
	s.blocks[id] = core.Block{ID: id, Label: label, Content: content}
	s.order = append(s.order, id)
}
