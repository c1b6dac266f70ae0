package core

import "time"

// The compress pipeline reaches the world only through these ports. The
// plug-in binds them to Extism host functions; a Go host may bind them to
// anything (hostfuncs binds them to real providers and stores).

// LLM completes a model request. A failure is an *LLMError (the host's
// error object); any other error is treated as a host failure.
type LLM interface {
	Complete(req *ModelRequest) (ModelResponse, error)
}

// Block is one archival memory block.
type Block struct {
	ID      string
	Label   string
	Content string
}

// Memory lists archival blocks whose label starts with a prefix.
type Memory interface {
	List(tier, labelPrefix string) ([]Block, error)
}

// ArchiveWrite is one archival block a commit creates.
type ArchiveWrite struct {
	Label   string
	Content string
	Tier    string // always "archival"
	Reason  string
}

// InsertMessage is the clip-archive message a commit inserts.
type InsertMessage struct {
	ID             string
	ConversationID string
	Role           Role // RoleSystem
	Content        string
	CreatedAt      time.Time
}

// Commit is the one durable effect of a compaction
// (docs/spec.md#compaction_commit): every write, delete, removal and the
// insert are applied in one transaction, or none.
type Commit struct {
	ConversationID   string
	OperationID      string
	ArchiveWrites    []ArchiveWrite
	ArchiveDeletes   []string // block ids
	RemoveMessageIDs []string
	Insert           InsertMessage
	// SearchText is what a store indexes for each removed message when it
	// moves to recall storage (memory_read, docs/spec.md#search): one entry
	// per id of RemoveMessageIDs, in that order, "" for the prior clip-archive
	// (superseded, never a search result), then one per original of
	// ReplaceMessages. A host that has no entry for a message indexes its
	// stored content.
	SearchText []SearchText
	// HistoryOwner is OwnerStore (the host's store holds the active
	// history: RemoveMessageIDs move from it to recall storage, Insert
	// joins it) or OwnerCaller (the caller keeps the messages: the store
	// writes RecallWrites to recall storage, each once, and keeps no
	// active history; RemoveMessageIDs is empty and Insert is not stored).
	HistoryOwner string
	// RecallWrites are the removed messages themselves (OwnerCaller), in
	// history order: the prior clip-archive first, with SearchText "".
	RecallWrites []RecallWrite
	// InsertRaw is the clip-archive exactly as the compaction's history
	// returns it, in the history's shape (AppendClipArchive): a host that
	// stores the active history stores these bytes as its raw JSON.
	InsertRaw []byte
	// NoInsert: the commit writes no clip-archive (insert_message null):
	// it summarized nothing and only replaces messages, and the history
	// keeps the clip-archive it has, if any.
	NoInsert bool
	// ReplaceMessages are the kept messages the commit replaces in place
	// (OwnerStore; docs/spec.md#counting-tokens-and-the-window): each
	// original moves to recall storage, indexed by its SearchText entry,
	// and its replacement takes its position in the active history. A
	// caller-owned commit carries the originals in RecallWrites instead,
	// and a replacement record in ArchiveWrites.
	ReplaceMessages []ReplaceMessage
}

// Who owns the history (docs/spec.md#who-owns-the-history).
const (
	OwnerStore  = "store"
	OwnerCaller = "caller"
)

// RecallWrite is one message a caller-owned compaction removed: its id
// (given or derived), role as clipfold reads it, text, time (the
// compaction's now when the message had none), the text to index, and its
// exact JSON.
type RecallWrite struct {
	ID         string
	Role       Role
	Content    string
	CreatedAt  time.Time
	SearchText string
	Raw        []byte
}

// SearchText is the text to index for one removed message.
type SearchText struct {
	MessageID string
	Text      string
}

// ErrConflict is returned by a Committer when an id to remove or delete no
// longer exists: another compaction won, and nothing was changed. With
// OwnerCaller only an archive delete can conflict.
var ErrConflict = &Error{Code: "conflict", Msg: "another compaction changed this conversation first"}

// Committer applies a Commit atomically.
type Committer interface {
	Commit(c *Commit) error
}

// Clock gives the pipeline time: Now for deadlines and batch times, Sleep
// for retry backoff. Tests use a fake clock to make time deterministic.
type Clock interface {
	Now() time.Time
	Sleep(d time.Duration)
}
