// Package store is the Go host's durable memory for clipfold: the active
// history of each conversation, the archival blocks the plug-in lists and
// writes (memory_list, compaction_commit of docs/spec.md#host-functions), and
// recall storage, where every message a compaction removes is moved rather
// than destroyed, so every summary can be traced back to the words it
// summarizes.
//
// Two implementations share one logical schema (see SCHEMA.md):
// hostfuncs/store/sqlite (the embedded default, a file or :memory:) and
// hostfuncs/store/postgres. hostfuncs/store/storetest is the conformance
// suite both must pass; a third implementation should run it too.
//
// Both also keep embedding vectors beside the archive (VectorIndex), so
// that with an embeddings provider (SearchOptions.Embedder, package
// hostfuncs/embeddings) Search fuses a ranking by meaning with the lexical one
// (HybridSearch, vectors.go).
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clipfold/clipfold/core"
)

// Store is what a Go host needs from a database. Every method is safe for
// concurrent use; Commit in particular must let exactly one of several
// racing compactions of the same conversation win.
type Store interface {
	// AppendMessages adds msgs, in order, after the conversation's active
	// history. Message ids are the caller's and unique within their
	// conversation (active and recall), so another conversation may use
	// the same ids: an id the conversation already holds is an error
	// naming it (*DuplicateIDError), and nothing is added.
	AppendMessages(ctx context.Context, conversationID string, msgs []Message) error

	// AppendNew appends, in order and in one transaction, the messages of
	// msgs whose id the conversation holds nowhere yet (neither active nor
	// in recall storage), and returns them; a message it holds already is
	// skipped, whatever its content. This is how a host syncs a list the
	// caller sends again and again: several processes syncing the same
	// list at once append each message once, and none of them fails.
	// msgs is validated as for AppendMessages (a repeated id within msgs
	// is an error).
	AppendNew(ctx context.Context, conversationID string, msgs []Message) ([]Message, error)

	// ActiveMessages returns the conversation's active history in order.
	ActiveMessages(ctx context.Context, conversationID string) ([]Message, error)

	// ListBlocks returns the blocks of tier whose label starts with
	// labelPrefix, taken literally (no wildcard characters), oldest first.
	// It backs the memory_list host function.
	ListBlocks(ctx context.Context, tier, labelPrefix string) ([]core.Block, error)

	// Commit applies c in one transaction (docs/spec.md#compaction_commit):
	// archive writes, archive deletes, the move of every removed message
	// into recall storage, and the insert of c.Insert at the start of the
	// active history. If an id to remove or delete no longer exists, it
	// changes nothing and returns an error matching core.ErrConflict.
	Commit(ctx context.Context, c *core.Commit) error

	// Recall returns a message a commit removed, with its raw JSON intact,
	// or an error matching ErrNotFound. A message is known by its
	// conversation and id; conversationID "" means any conversation: the
	// message of the only conversation holding messageID in recall, or,
	// when several do, an *AmbiguousIDError listing them (name one).
	Recall(ctx context.Context, conversationID, messageID string) (Message, error)

	// Block returns an archival block (a batch summary) in full, with
	// its parsed batch metadata, or an error matching ErrNotFound.
	Block(ctx context.Context, blockID string) (StoredBlock, error)

	// IndexActive sets what the search index holds for active messages of
	// the conversation: texts maps a message id to its search text, as
	// the plug-in renders it over the active history
	// (core.MessageSearchTextAt: its text, tool names, inputs and outputs,
	// then the context lines of its exchange). Appended messages are
	// indexed by their content until then. An id the active history does
	// not hold is ignored.
	IndexActive(ctx context.Context, conversationID string, texts map[string]string) error

	// Search is ranked full-text search over the active history, archived
	// blocks and recalled messages (memory_read, docs/spec.md#search): one
	// list, best hit first, on comparable scores, ties to the more recent; a
	// hit still in the active history is InContext. query is a
	// natural-language question, analysed by core.AnalyzeSearchQuery: any of
	// its words matches, no character is search syntax. Superseded
	// clip-archives are never hits. opts.InContext adds a caller's messages to
	// the ranking for this search only. With opts.Embedder the lexical and
	// vector rankings are fused (HybridSearch); a store that keeps no vectors
	// answers lexically and says so through opts.Warn.
	Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error)

	// Close releases the database.
	Close() error
}

// Message is one stored conversation message.
type Message struct {
	ID             string
	ConversationID string
	// Role is the wire spelling: user, assistant, system or tool.
	Role string
	// Content is the message's text, what search indexes.
	Content string
	// CreatedAt is zero when the message had no created_at.
	CreatedAt time.Time
	// Raw is the exact JSON the message was given as. It is what a host
	// hands back to the plug-in, so it is stored and returned unchanged.
	Raw json.RawMessage
	// SearchText is what the search index holds for a message of
	// SearchOptions.InContext, as the plug-in renders it
	// (core.MessageSearchTextAt); "" means Content. Appending and reading
	// messages ignore it: an active message's is set by IndexActive.
	SearchText string
}

// SearchOptions narrows a Search.
type SearchOptions struct {
	// ConversationID, when set, keeps only hits of that conversation.
	ConversationID string
	// Limit caps the number of hits; <= 0 means DefaultSearchLimit.
	Limit int
	// Embedder, when set, adds a vector ranking (cosine similarity of
	// the documents' embeddings to the query's) fused with the lexical
	// one by reciprocal rank fusion (see HybridSearch). nil: lexical only.
	Embedder Embedder
	// Warn, when set, hears why a search with an Embedder fell back to
	// the lexical ranking (the provider failed) or ranked by the vectors
	// stored so far. The search itself still succeeds.
	Warn func(error)
	// InContext are the messages in the context of a conversation whose
	// caller keeps its messages (history_owner "caller": the store holds
	// no active history for it), each with its id (given or derived),
	// role, content, created_at and SearchText, in order, as the plug-in
	// decodes them. They are ranked with everything else for this search
	// only (the store keeps nothing of them) and are hits InContext; one
	// whose id the conversation's recall holds is left out (the recalled
	// original is the hit). ConversationID must be set. They are ranked
	// lexically: an Embedder ranks only what is stored.
	InContext []Message
}

// DefaultSearchLimit is the number of hits a Search returns when
// SearchOptions.Limit is not set.
const DefaultSearchLimit = 20

// MaxSearchLimit bounds SearchOptions.Limit so one query cannot ask for an
// unbounded result.
const MaxSearchLimit = 1000

// HitKind says what a search hit (or a record read by id) is.
type HitKind string

// Hit kinds.
const (
	HitBatch   HitKind = "batch"   // an archival block (usually a batch summary)
	HitMessage HitKind = "message" // a message in recall storage, or in the context (Hit.InContext)
)

// Hit is one search result.
//
// Without an embedder Search returns the lexical ranking (bm25 /
// ts_rank_cd). With one (SearchOptions.Embedder), a vector ranking of the
// same records is fused with it by reciprocal rank fusion, and Score is
// the fused score. Either way Score is comparable only within the list it
// came in.
type Hit struct {
	Kind HitKind
	// ID is the message id (HitMessage) or the block id (HitBatch); Read,
	// Recall or Block print the record in full.
	ID string
	// ConversationID is the conversation the hit belongs to; empty for a
	// block written without one.
	ConversationID string
	// Start and End are the time the hit covers: a message's created_at
	// (both; zero when unknown), a batch's earliest and latest covered
	// created_at (from its metadata; the block's write time when it has
	// none).
	Start, End time.Time
	// Score orders hits: higher is better (negated bm25 for SQLite,
	// ts_rank_cd for PostgreSQL; with an embedder, the sum of
	// 1/(RRFK + rank) over the rankings that have the hit).
	Score float64
	// LexicalRank and VectorRank are the hit's ranks (1 the best; equal
	// scores share a rank) in the two rankings a fused search combined,
	// 0 when that ranking does not have it; both 0 without an embedder.
	LexicalRank, VectorRank int
	// Similarity is the cosine similarity of the hit's embedding to the
	// query's, when the vector ranking has it.
	Similarity float64
	// Snippet is a short excerpt around the matched terms, the terms
	// wrapped in [ and ]; for a hit only the vector ranking found, the
	// text's beginning (LeadSnippet).
	Snippet string
	// Text is the hit's full text: for a message what was indexed (its
	// text with its tool calls and results, then, after
	// core.SearchContextSep, the lines of its exchange that were indexed
	// with it: OwnText leaves them out), for a batch its summary.
	Text string
	// Role is the message's role; empty for blocks.
	Role string
	// Label is the block's label; empty for messages.
	Label string
	// CreatedAt is when the message was created or the block written.
	CreatedAt time.Time
	// OperationID is the compaction that wrote the block or removed the
	// message, when known.
	OperationID string
	// Batch is the block's parsed batch metadata (depth, method, source
	// message ids, …) when its content carries it; nil otherwise and for
	// messages. Batch.Content is the summary without the metadata line.
	Batch *core.Batch
	// InContext says the message is still in the conversation's context:
	// in the store's active history, or one of SearchOptions.InContext. It
	// is not in recall storage (Recall does not find it); the agent has
	// it in front of it already.
	InContext bool
}

// StoredBlock is one archival block as stored.
type StoredBlock struct {
	ID             string
	Tier           string
	Label          string
	Content        string // exactly as written: for a batch, the metadata line, "\n", the summary
	ConversationID string // empty for a block written without one
	Reason         string
	OperationID    string
	CreatedAt      time.Time // when it was written
	// Batch is the parsed batch metadata, nil when Content carries none.
	Batch *core.Batch
	// Malformed says what is wrong with the metadata line when Content's
	// first line is meant as one but cannot be read (core.ParseBlock): the
	// block is then read as a plain one, Batch nil.
	Malformed string
}

// Record is a message or block read by id (Read).
type Record struct {
	Kind    HitKind
	Message *Message     // HitMessage: the recalled message, Raw exact
	Block   *StoredBlock // HitBatch
}

// Read returns the recalled message with id of the conversation (""
// for any, as Store.Recall: an *AmbiguousIDError when several
// conversations hold it), or else the archival block with id, or an error
// matching ErrNotFound when neither exists. Message and block ids are
// separate name spaces; a message wins a clash (block ids are "blk_" and
// 24 random hex digits, unique across the store, so the conversation
// does not narrow them).
func Read(ctx context.Context, s Store, conversationID, id string) (Record, error) {
	m, err := s.Recall(ctx, conversationID, id)
	if err == nil {
		return Record{Kind: HitMessage, Message: &m}, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Record{}, err
	}
	b, err := s.Block(ctx, id)
	if err == nil {
		return Record{Kind: HitBatch, Block: &b}, nil
	}
	if errors.Is(err, ErrNotFound) {
		if conversationID != "" {
			return Record{}, fmt.Errorf("read %q: no recalled message of conversation %q and no archival block has this id: %w",
				id, conversationID, ErrNotFound)
		}
		return Record{}, fmt.Errorf("read %q: no recalled message or archival block has this id: %w", id, ErrNotFound)
	}
	return Record{}, err
}

// MaxListedConversations is how many conversations an *AmbiguousIDError
// names at most.
const MaxListedConversations = 10

// AmbiguousIDError reports a message id read without a conversation
// (Store.Recall with conversationID "") that recall storage holds for
// several conversations: message ids are unique within a conversation
// only.
type AmbiguousIDError struct {
	ID string
	// ConversationIDs are the conversations holding ID, in order, at most
	// MaxListedConversations; More says there are others.
	ConversationIDs []string
	More            bool
}

func (e *AmbiguousIDError) Error() string {
	list := fmt.Sprintf("%q", e.ConversationIDs)
	if e.More {
		list = strings.TrimSuffix(list, "]") + " …]"
	}
	return fmt.Sprintf("message id %q is in recall storage for several conversations %s: name the conversation", e.ID, list)
}

// ResolveConversation is Store.Recall's answer for a message read without
// a conversation: holders are the conversations recall storage holds
// messageID for, in order (the backend reads at most
// MaxListedConversations + 1). None: ErrNotFound; one: that
// conversation; several: an *AmbiguousIDError.
func ResolveConversation(messageID string, holders []string) (string, error) {
	switch {
	case len(holders) == 0:
		return "", fmt.Errorf("recall message %q: %w", messageID, ErrNotFound)
	case len(holders) == 1:
		return holders[0], nil
	}
	e := &AmbiguousIDError{ID: messageID, ConversationIDs: holders}
	if len(holders) > MaxListedConversations {
		e.ConversationIDs, e.More = holders[:MaxListedConversations], true
	}
	return "", e
}

// NotRecalled is Store.Recall's error for a message the conversation's
// recall storage does not hold.
func NotRecalled(conversationID, messageID string) error {
	return fmt.Errorf("recall message %q of conversation %q: %w", messageID, conversationID, ErrNotFound)
}

// FinishHit completes a hit a backend scanned: its kind from the query's
// "message" or "batch", CreatedAt from the stored text, and for a batch
// its metadata, Text the summary alone; then Start and End (see Hit).
func FinishHit(h *Hit, kind, createdAt string) error {
	h.Kind = HitKind(kind)
	var err error
	if h.CreatedAt, err = ParseTime(createdAt); err != nil {
		return fmt.Errorf("%s %q: %w", kind, h.ID, err)
	}
	h.Start, h.End = h.CreatedAt, h.CreatedAt
	if h.Kind == HitBatch {
		if h.Batch, _ = ParseBatch(h.Text); h.Batch != nil {
			h.Text = h.Batch.Content
			h.Start, h.End = h.Batch.Start, h.Batch.End
		}
	}
	return nil
}

// ErrNotFound is returned (wrapped) when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// ErrReadOnly is returned (wrapped) by a write through a store opened
// for reading only (e.g. sqlite.OpenReadOnly).
var ErrReadOnly = errors.New("the store is open read-only")

// ReadOnlyStore is implemented by stores that can be opened for reading
// only; ReadOnly says whether this one was. A search with an embedder
// through a read-only store embeds nothing: it ranks the vectors stored.
type ReadOnlyStore interface {
	ReadOnly() bool
}

// ErrConflict is core.ErrConflict, re-exported so callers of this package
// need not import core to test for it with errors.Is.
var ErrConflict = core.ErrConflict

// Dumper is implemented by stores that can print their whole content
// deterministically. The conformance suite uses it to prove that a failed
// commit leaves the database exactly as it was.
type Dumper interface {
	Dump(ctx context.Context) (string, error)
}

// Migrator is implemented by stores with a versioned schema. Open applies
// the migrations; calling Migrate again must be a no-op that reports zero
// applied, which the conformance suite checks.
type Migrator interface {
	Migrate(ctx context.Context) (applied int, err error)
}

// NewID returns a fresh random identifier with prefix, e.g. "blk_9f…".
// Random rather than sequential so two hosts writing one database, or a
// database restored from a copy, never mint the same id.
func NewID(prefix string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new id: reading random bytes: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// wireMessage is the JSON shape of a message built by the host (the
// clip-archive, or a message appended without Raw). Field order is the
// order the fields are written in.
type wireMessage struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversation_id"`
	Role           string `json:"role"`
	Content        string `json:"content"`
	CreatedAt      string `json:"created_at,omitempty"`
}

// MarshalMessage builds the wire JSON of a message from its fields:
// {"id","conversation_id","role","content","created_at"}, created_at in
// core.FormatTime and left out when zero (core.AppendStoredMessageJSON, as
// a commit writes a clip-archive without insert_raw).
func MarshalMessage(m *Message) json.RawMessage {
	return core.AppendStoredMessageJSON(nil, m.ConversationID,
		&core.StoredMessage{ID: m.ID, Role: m.Role, Content: m.Content, CreatedAt: FormatTime(m.CreatedAt)})
}

// CommitError is a commit's error that core.PlanCommit or the checking of
// its ids returned, with the commit it refused.
func CommitError(c *core.Commit, err error) error {
	if c == nil {
		return fmt.Errorf("commit: %w", err)
	}
	return fmt.Errorf("commit %q to %q: %w", c.OperationID, c.ConversationID, err)
}

// CheckFailed is a commit's error when a check of its plan (a
// core.CommitCheck of field and must) failed for ids: a conflict when ids
// must be active or archival blocks (another compaction won), a
// *DuplicateIDError when they must be new.
func CheckFailed(p *core.CommitPlan, field, must string, ids []string) error {
	if must == core.CheckNew {
		return fmt.Errorf("commit %q to %q: %s: %w", p.OperationID, p.ConversationID, field,
			&DuplicateIDError{ConversationID: p.ConversationID, IDs: ids})
	}
	return ConflictError(p.ConversationID, field, ids)
}

// PrepareAppend validates msgs for AppendMessages and fills the gaps: the
// conversation id (which must match when set), Raw when empty (built by
// MarshalMessage). It rejects empty or repeated ids, unknown roles and Raw
// that is not JSON, naming the message. Both backends call it so they
// accept and refuse exactly the same input.
func PrepareAppend(conversationID string, msgs []Message) ([]Message, error) {
	if conversationID == "" {
		return nil, errors.New("append: conversation id is empty")
	}
	out := make([]Message, len(msgs))
	seen := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if m.ID == "" {
			return nil, fmt.Errorf("append: messages[%d].id is empty", i)
		}
		if j, dup := seen[m.ID]; dup {
			return nil, fmt.Errorf("append: messages[%d].id %q repeats messages[%d]", i, m.ID, j)
		}
		seen[m.ID] = i
		if m.ConversationID == "" {
			m.ConversationID = conversationID
		} else if m.ConversationID != conversationID {
			return nil, fmt.Errorf("append: message %q belongs to conversation %q, not %q", m.ID, m.ConversationID, conversationID)
		}
		if _, ok := core.ParseRole(m.Role); !ok {
			return nil, fmt.Errorf("append: message %q: role %q is not user, assistant, system or tool", m.ID, m.Role)
		}
		if !m.CreatedAt.IsZero() {
			m.CreatedAt = m.CreatedAt.UTC().Truncate(time.Millisecond)
		}
		if len(m.Raw) == 0 {
			m.Raw = MarshalMessage(&m)
		} else if !json.Valid(m.Raw) {
			return nil, fmt.Errorf("append: message %q: raw is not valid JSON", m.ID)
		}
		out[i] = m
	}
	return out, nil
}

// WithoutHeld is the check both backends make inside an append's
// transaction, once they have read which of the ids of msgs the
// conversation holds (held): an error naming them, or, with skip,
// msgs without them.
func WithoutHeld(conversationID string, msgs []Message, held []string, skip bool) ([]Message, error) {
	if len(held) == 0 {
		return msgs, nil
	}
	if !skip {
		return nil, &DuplicateIDError{ConversationID: conversationID, IDs: held}
	}
	h := make(map[string]bool, len(held))
	for _, id := range held {
		h[id] = true
	}
	out := msgs[:0:0]
	for _, m := range msgs {
		if !h[m.ID] {
			out = append(out, m)
		}
	}
	return out, nil
}

// DuplicateIDError reports message ids the conversation already holds
// (active or in recall storage): ids are unique within a conversation.
type DuplicateIDError struct {
	ConversationID string
	IDs            []string
}

func (e *DuplicateIDError) Error() string {
	return fmt.Sprintf("message id(s) already stored in conversation %q: %q", e.ConversationID, e.IDs)
}

// ConflictError wraps core.ErrConflict with what was missing, so the log
// says which id another compaction took first.
func ConflictError(conversationID, what string, missing []string) error {
	return fmt.Errorf("%w: conversation %q: %s no longer exist: %q", core.ErrConflict, conversationID, what, missing)
}

// FormatTime is how every instant is stored: core.FormatTime, or "" for the
// zero time (a message without created_at).
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return core.FormatTime(t)
}

// ParseTime reads a stored instant back; "" is the zero time.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := core.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// ParseBatch reads a block's batch metadata (core.ParseBlock), nil when
// its content carries none or metadata that cannot be read: problem then
// says what is wrong. The conversation is the metadata line's (the
// block's own for a legacy header), since a block is shown for whatever
// conversation wrote it.
func ParseBatch(content string) (b *core.Batch, problem string) {
	m, ok, problem := core.ParseBlock(content)
	if !ok {
		return nil, problem
	}
	return &m.Batch, ""
}

// ClampLimit applies DefaultSearchLimit and MaxSearchLimit.
func ClampLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultSearchLimit
	case n > MaxSearchLimit:
		return MaxSearchLimit
	}
	return n
}

// Minus returns the elements of want not in got, in want's order.
func Minus(want, got []string) []string {
	have := make(map[string]bool, len(got))
	for _, g := range got {
		have[g] = true
	}
	var out []string
	for _, w := range want {
		if !have[w] {
			out = append(out, w)
		}
	}
	return out
}

// OwnText is the hit's text without the context lines of its exchange: a
// message's own text with its tool calls and results, a batch's summary.
func (h *Hit) OwnText() string {
	own, _, _ := strings.Cut(h.Text, core.SearchContextSep)
	return own
}

// CheckInContext refuses opts.InContext that a search cannot index: no
// ConversationID, a message without an id, of another conversation, or
// of an unknown role. Both backends call it, so they refuse the same
// input with the same words.
func CheckInContext(opts *SearchOptions) error {
	if opts.ConversationID == "" {
		return errors.New("search: SearchOptions.InContext needs SearchOptions.ConversationID (the conversation the messages are the context of)")
	}
	for i := range opts.InContext {
		m := &opts.InContext[i]
		if m.ID == "" {
			return fmt.Errorf("search: InContext[%d].id is empty", i)
		}
		if m.ConversationID != "" && m.ConversationID != opts.ConversationID {
			return fmt.Errorf("search: InContext[%d] (%q) belongs to conversation %q, not %q", i, m.ID, m.ConversationID, opts.ConversationID)
		}
		if _, ok := core.ParseRole(m.Role); !ok {
			return fmt.Errorf("search: InContext[%d] (%q): role %q is not user, assistant, system or tool", i, m.ID, m.Role)
		}
	}
	return nil
}

// InContextJSON checks opts.InContext (CheckInContext) and encodes it as
// queries/search_in_context.sql reads it: a JSON array of [id, role,
// content, created_at, search_text] (created_at "" when unknown,
// search_text null for "": the content is indexed).
func InContextJSON(opts *SearchOptions) (string, error) {
	if err := CheckInContext(opts); err != nil {
		return "", err
	}
	rows := make([][5]any, len(opts.InContext))
	for i := range opts.InContext {
		m := &opts.InContext[i]
		var st any
		if m.SearchText != "" {
			st = m.SearchText
		}
		rows[i] = [5]any{m.ID, m.Role, m.Content, FormatTime(m.CreatedAt), st}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return "", fmt.Errorf("search: encoding InContext: %w", err)
	}
	return string(b), nil
}
