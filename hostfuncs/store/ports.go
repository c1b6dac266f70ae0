package store

import (
	"context"

	"github.com/clipfold/clipfold/core"
)

// Ports binds a Store to core's Memory and Committer ports, whose methods
// take no context: ctx is the one every call uses (typically the
// compaction's, so a cancelled compaction cancels its store calls too).
type Ports struct {
	Ctx   context.Context
	Store Store
}

var (
	_ core.Memory    = Ports{}
	_ core.Committer = Ports{}
)

// List implements core.Memory with Store.ListBlocks.
func (p Ports) List(tier, labelPrefix string) ([]core.Block, error) {
	return p.Store.ListBlocks(p.ctx(), tier, labelPrefix)
}

// Commit implements core.Committer with Store.Commit.
func (p Ports) Commit(c *core.Commit) error {
	return p.Store.Commit(p.ctx(), c)
}

func (p Ports) ctx() context.Context {
	if p.Ctx == nil {
		return context.Background()
	}
	return p.Ctx
}
