// Package clipfold compacts long LLM conversations with the clipfold
// WebAssembly plug-in, from Go.
//
// When an agent's history outgrows the model's context window, Compress
// splits it, summarizes the older part in chunks, archives the summaries,
// and replaces the old messages with one clip-archive message — through
// one atomic store commit, so a failure half-way never loses a message.
// Removed messages move to recall storage; Search finds anything that was
// compacted by a question asked in plain words.
//
// The plug-in embedded in this module (package embed, the TinyGo build)
// runs on wazero through the Extism Go SDK: no cgo and no Wasm toolchain.
// Open compiles it once and pools instances; every method is safe for
// concurrent use.
//
//	c, err := clipfold.Open(ctx, clipfold.Options{})   // offline: SQLite in memory, extractive summarizer
//	res, err := c.Compress(ctx, "conv-1", history, nil) // nil: no CompressOptions
//
// Example (example_test.go) runs these lines and a search, and checks
// their output.
//
// The same functions run without the sandbox in package api (JSON in and
// out) and package core (Go values); hostfuncs has the LLM providers and
// stores; cmd/clipfold is the command built on this package.
package clipfold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/clipfold/clipfold/api"
	"github.com/clipfold/clipfold/core"
	"github.com/clipfold/clipfold/embed"
	"github.com/clipfold/clipfold/hostfuncs"
	"github.com/clipfold/clipfold/hostfuncs/llm"
	"github.com/clipfold/clipfold/hostfuncs/store"
	"github.com/clipfold/clipfold/hostfuncs/store/sqlite"
	"github.com/clipfold/clipfold/internal/wasmhost"
	extism "github.com/extism/go-sdk"
)

// Options configure a Compactor. The zero value works offline.
type Options struct {
	// LLM summarizes. nil: offline (no network, no key): compress
	// summarizes inside the plug-in (config summarizer "extractive" unless
	// Config sets summarizer), with dated lines and "extractive" batches,
	// as the command and the Python and Node packages do offline; the
	// extractive client (llm.NewExtractive) answers the calls a config of
	// summarizer "llm" makes. See package hostfuncs/llm for Anthropic,
	// OpenAI-compatible and Ollama clients.
	LLM llm.Client
	// Store keeps each conversation's active history, the archive and
	// recall storage. nil: a private in-memory SQLite store, closed with
	// the Compactor. See hostfuncs/store/sqlite (a file) and
	// hostfuncs/store/postgres.
	Store store.Store
	// Config holds [summarization] keys of docs/spec.md#config (chunk_size,
	// keep_recent, model_max_tokens, …) sent with every call; a call's
	// own config overrides them. Values are anything encoding/json
	// encodes. Invalid keys or values make Open fail, naming the key.
	Config map[string]any
	// PoolSize is how many plug-in instances may run at once (default 1).
	// An instance keeps the circuit breakers of the conversations it
	// compacted; with more than one, a conversation's failures are
	// counted per instance.
	PoolSize int
	// Wasm is the plug-in to load. nil: the embedded build (embed.Wasm).
	Wasm []byte
	// CacheDir is where compiled code is cached between processes. "":
	// $CLIPFOLD_CACHE_DIR, else the user cache directory; "-": no cache.
	CacheDir string
	// Logger receives the plug-in's warnings (an unknown config key, for
	// example). nil drops them. Setting it sets the Extism Go SDK's
	// process-wide log level to warnings (the SDK drops every line
	// otherwise).
	Logger *slog.Logger
	// MaxMemory bounds an instance's memory: above it, the instance is
	// replaced before its next call. 0: 256 MiB; negative: never.
	MaxMemory int64
	// OnHostCall, when set, observes every host-function call the plug-in
	// makes (name, duration, whether it answered an error).
	OnHostCall func(name string, took time.Duration, failed bool)
	// Embedder, when set, makes Search semantic: lexical and vector
	// rankings fused (store.HybridSearch). Compress embeds what each
	// compaction archived after it committed; a failure there is a
	// warning in the Result, never a failed compaction, and the next
	// Search embeds what is missing. See package hostfuncs/embeddings for the
	// OpenAI-compatible and Ollama providers. nil: lexical search.
	Embedder store.Embedder
}

// Compactor is the loaded plug-in with its LLM and store.
type Compactor struct {
	rt        *wasmhost.Runtime
	pool      *wasmhost.Pool
	store     store.Store
	ownsStore bool
	config    []byte // Options.Config as a JSON object, or nil
	embedder  store.Embedder
	logger    *slog.Logger
	// conversations serializes the compactions of each conversation.
	conversations convLocks
	// ahead is CompactAhead's state per conversation, and aheadPool the
	// instances its compactions run on (made on first use), so that the
	// checks of other turns never wait for a summarizer.
	ahead     aheadStates
	aheadPool *wasmhost.Pool
	poolSize  int
}

// CallError is an export's refusal of its input: the error code of
// docs/spec.md#errors-and-limits (invalid_json, invalid_input, too_large,
// host_error, internal) and a message naming the offending field.
type CallError = wasmhost.CallError

// Open compiles the plug-in and binds it to the LLM and store of opts.
// Close the Compactor when done.
func Open(ctx context.Context, opts Options) (*Compactor, error) {
	c := &Compactor{store: opts.Store, embedder: opts.Embedder, logger: opts.Logger}
	cfg := opts.Config
	if _, set := cfg["summarizer"]; opts.LLM == nil && !set {
		// Offline, the plug-in summarizes the messages themselves (dated
		// lines, in time order), not an undated summarization request.
		cfg = maps.Clone(cfg)
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg["summarizer"] = core.SummarizerExtractive
	}
	if opts.LLM != nil && !hasAny(cfg, "chunk_size", "max_chunk_tokens") {
		// A model summarizes: each request holds as much as it can, so a
		// compaction makes few calls (one after the other: each folds in
		// the summary before it).
		cfg = maps.Clone(cfg)
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg["max_chunk_tokens"] = core.ChunkTokensAuto
	}
	if cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("clipfold: Options.Config: %w", err)
		}
		c.config = b
	}
	if c.store == nil {
		st, err := sqlite.Open(sqlite.MemoryPath)
		if err != nil {
			return nil, err
		}
		c.store, c.ownsStore = st, true
	}
	client := opts.LLM
	if client == nil {
		client = llm.NewExtractive()
	}
	wasm := opts.Wasm
	if wasm == nil {
		wasm = embed.Wasm
	}
	host := &hostfuncs.Host{LLM: client, Store: c.store, OnCall: opts.OnHostCall}
	wo := wasmhost.Options{Wasm: wasm, Host: host, CacheDir: opts.CacheDir, MaxMemory: opts.MaxMemory}
	if l := opts.Logger; l != nil {
		wo.Logger = func(level extism.LogLevel, msg string) {
			l.Log(context.Background(), slogLevel(level), msg, "source", "clipfold plug-in")
		}
	}
	rt, err := wasmhost.NewRuntime(ctx, wo)
	if err != nil {
		c.closeStore()
		return nil, err
	}
	c.rt = rt
	c.pool = wasmhost.NewPool(rt, opts.PoolSize)
	c.poolSize = opts.PoolSize
	if opts.Config != nil {
		// Refuse a bad config now, naming the key, rather than on every call.
		if _, err := c.ShouldCompact(ctx, nil, nil); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("clipfold: Options.Config: %w", err)
		}
	}
	return c, nil
}

func slogLevel(l extism.LogLevel) slog.Level {
	switch {
	case l >= extism.LogLevelError:
		return slog.LevelError
	case l >= extism.LogLevelWarn:
		return slog.LevelWarn
	case l >= extism.LogLevelInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func (c *Compactor) closeStore() error {
	if c.ownsStore {
		return c.store.Close()
	}
	return nil
}

// Close releases the plug-in, and the store when Open made it.
func (c *Compactor) Close() error {
	ctx := context.Background()
	c.pool.Close(ctx)
	c.ahead.stop()
	if p := c.aheadInstances(false); p != nil {
		p.Close(ctx)
	}
	err := c.rt.Close(ctx)
	return errors.Join(err, c.closeStore())
}

// Store is the store the Compactor reads and commits to.
func (c *Compactor) Store() store.Store { return c.store }

// Call runs a plug-in export with a raw JSON input and returns its raw
// output (docs/spec.md#exports). A refused input is a *CallError.
func (c *Compactor) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	return c.pool.Call(ctx, export, input)
}

// call encodes input (with the Compactor's config unless it has one),
// runs export and decodes its output into out.
func (c *Compactor) call(ctx context.Context, export string, input map[string]any, out any) error {
	return c.callOn(ctx, c.pool, export, input, out)
}

// callOn is call on the instances of pool.
func (c *Compactor) callOn(ctx context.Context, pool *wasmhost.Pool, export string, input map[string]any, out any) error {
	if _, ok := input["config"]; !ok && c.config != nil {
		input["config"] = json.RawMessage(c.config)
	}
	in, err := json.Marshal(input)
	if err != nil {
		return fmt.Errorf("clipfold: %s: encoding the input: %w", export, err)
	}
	raw, err := pool.Call(ctx, export, in)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("clipfold: %s: decoding the output: %w", export, err)
	}
	return nil
}

// Split is the split export's result: which messages a compaction would
// summarize (in importance order, least important first) and keep.
type Split struct {
	ToCompress   []json.RawMessage `json:"to_compress"`
	ToKeep       []json.RawMessage `json:"to_keep"`
	PriorSummary json.RawMessage   `json:"prior_summary"` // the prior clip-archive, or JSON null
}

// Split tells what a compaction of messages would summarize and keep.
func (c *Compactor) Split(ctx context.Context, messages []json.RawMessage) (*Split, error) {
	var out Split
	if err := c.call(ctx, "split", map[string]any{"messages": rawArray(messages)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Score returns each message's importance (docs/spec.md#score).
func (c *Compactor) Score(ctx context.Context, messages []json.RawMessage) ([]float64, error) {
	var out struct {
		Scores []float64 `json:"scores"`
	}
	if err := c.call(ctx, "score", map[string]any{"messages": rawArray(messages)}, &out); err != nil {
		return nil, err
	}
	return out.Scores, nil
}

// Due is shouldCompact's answer: compaction is due when the estimated
// tokens exceed the limit (context_budget × model_max_tokens).
type Due struct {
	Due    bool `json:"due"`
	Tokens int  `json:"tokens"`
	Limit  int  `json:"limit"`
	// PrepareLimit is the soft threshold, ⌊prepare_at × Limit⌋: over it,
	// CompactAhead starts a compaction in the background (Limit when the
	// plug-in does not report one).
	PrepareLimit int `json:"prepare_limit"`
}

// Usage is what the provider reported for the last model call
// (docs/spec.md#counting-tokens-and-the-window): InputTokens for a request
// that held the first Messages messages of the history now checked or
// compacted, with the system prompt and the tools. The provider's count wins
// for those messages; only the rest is estimated, and overhead_tokens is not
// added on top (InputTokens holds it). Pass the usage of the model call just
// made: for a response to a request of the whole history, Usage{InputTokens:
// n, Messages: len(history)} before the response and what followed it are
// appended. A negative count, or Messages beyond the history, is a *CallError
// (invalid_input) naming usage.input_tokens or usage.messages.
type Usage struct {
	InputTokens int `json:"input_tokens"`
	Messages    int `json:"messages"`
}

// UsageOf is the Usage of resp, the answer of an llm.Client to req: the
// input tokens the provider counted for req's messages. For a host that
// runs its agent loop with the clients of package hostfuncs/llm and
// keeps req.Messages as its history.
func UsageOf(req *core.ModelRequest, resp *core.ModelResponse) *Usage {
	return &Usage{InputTokens: resp.InputTokens, Messages: len(req.Messages)}
}

// ShouldCompactOptions are shouldCompact's optional inputs.
type ShouldCompactOptions struct {
	// Usage is the provider's count of the last model call (see Usage);
	// without it every message is estimated and overhead_tokens added.
	Usage *Usage
	// Config overrides the Compactor's config for this call: for
	// overhead_tokens (see OverheadTokens), model_max_tokens and
	// context_budget.
	Config map[string]any
}

// ShouldCompact tells whether messages have outgrown the budget: the
// check before each model call (opts may be nil).
func (c *Compactor) ShouldCompact(ctx context.Context, messages []json.RawMessage, opts *ShouldCompactOptions) (Due, error) {
	var out Due
	in := map[string]any{"messages": rawArray(messages)}
	if opts != nil {
		if opts.Usage != nil {
			in["usage"] = opts.Usage
		}
		if opts.Config != nil {
			in["config"] = mergeConfig(c.config, opts.Config)
		}
	}
	out.PrepareLimit = -1
	err := c.call(ctx, "shouldCompact", in, &out)
	if out.PrepareLimit < 0 {
		out.PrepareLimit = out.Limit
	}
	return out, err
}

// OverheadTokens is what a model request sends beside the messages
// counted: the system prompt and the tool schemas (tools: anything
// encoding/json encodes, such as the provider's tools array), as the
// plug-in's estimateTokens export counts them under the Compactor's
// config (token_estimator). Set it as the config key overhead_tokens for
// counts without the provider's usage: ShouldCompact and Compress before
// the first model call, or with a system prompt that changed since (in
// ShouldCompactOptions.Config or CompressOptions.Config).
func (c *Compactor) OverheadTokens(ctx context.Context, system string, tools any) (int, error) {
	var parts []map[string]string
	if system != "" {
		parts = append(parts, map[string]string{"role": "system", "content": system})
	}
	if tools != nil {
		b, err := json.Marshal(tools)
		if err != nil {
			return 0, fmt.Errorf("clipfold: OverheadTokens: tools: %w", err)
		}
		if s := string(b); s != "null" && s != "[]" && s != "{}" {
			parts = append(parts, map[string]string{"role": "system", "content": s})
		}
	}
	if len(parts) == 0 {
		return 0, nil
	}
	var out struct {
		Tokens int `json:"tokens"`
	}
	err := c.call(ctx, "estimateTokens", map[string]any{"messages": parts}, &out)
	return out.Tokens, err
}

// Batch is one archived summary (docs/spec.md#batch).
type Batch struct {
	Content          string   `json:"content"`
	Depth            int      `json:"depth"`
	StartTime        string   `json:"start_time"`
	EndTime          string   `json:"end_time"`
	MessageCount     int      `json:"message_count"`
	SourceMessageIDs []string `json:"source_message_ids"`
	OperationID      string   `json:"operation_id"`
	Method           string   `json:"method"`
}

// Result is compress's CompactionResult (docs/spec.md#compactionresult). A
// compaction that failed is not an error: Failed is set, FailureCode says why,
// and History is the input, byte for byte.
type Result struct {
	History []json.RawMessage `json:"history"`
	// ClipArchive is the text of the clip-archive History starts with,
	// nil when it starts with none: for callers that put it in a system
	// prompt (and send History[1:]).
	ClipArchive         *string  `json:"clip_archive"`
	BatchesCreated      int      `json:"batches_created"`
	MessagesCompressed  int      `json:"messages_compressed"`
	TokensBefore        int      `json:"tokens_estimate_before"`
	TokensAfter         int      `json:"tokens_estimate_after"`
	Failed              bool     `json:"failed"`
	FailureCode         string   `json:"failure_code"`
	FailureMessage      string   `json:"failure_message"`
	OperationID         string   `json:"operation_id"`
	LLMCalls            int      `json:"llm_calls"`
	Retries             int      `json:"retries"`
	Batches             []Batch  `json:"batches"`
	Warnings            []string `json:"warnings"`
	ConsecutiveFailures int      `json:"consecutive_failures"`
	// ToolResultsCleared and MessagesTruncated count the kept messages
	// this compaction replaced to fit the window
	// (docs/spec.md#keeping-the-window): tool results cleared to one line
	// naming the tool, its arguments and the recall id of the full output,
	// messages middle-truncated; each original is in recall storage.
	ToolResultsCleared int `json:"tool_results_cleared"`
	MessagesTruncated  int `json:"messages_truncated"`
	// Commit is what a successful dry run would have committed: the exact
	// compaction_commit input (docs/spec.md#dry-run). CompactAhead applies
	// it later.
	Commit json.RawMessage `json:"commit,omitempty"`
}

// CompressOptions are compress's optional inputs.
type CompressOptions struct {
	// Config overrides the Compactor's config for this call.
	Config map[string]any
	// DryRun does everything but the commit.
	DryRun bool
	// Now is the instant the circuit breaker is judged at (default: now).
	Now time.Time
	// OperationID names the compaction (default: a fresh op_… id).
	OperationID string
	// CallerOwned says the caller keeps the messages
	// (docs/spec.md#who-owns-the-history, history_owner "caller"), as
	// LangChain, LangGraph, the AI SDK and the provider SDKs do: history is
	// the caller's whole list, the store keeps only the archive and recall
	// storage (removed messages are written there once, by id, given or
	// derived), and Result.History is the compacted view to send to the model.
	// Either pattern works: send the whole list every turn, or replace the
	// list with Result.History and append to it.
	CallerOwned bool
	// OnlyIfDue compacts only when the history (for a caller-owned one,
	// its compacted view) is over the budget, as ShouldCompact says; for
	// callers that call Compress on every turn.
	OnlyIfDue bool
	// Shape names the message shape when the messages alone cannot tell
	// ("anthropic" for Anthropic text turns, whose clip-archive must be a
	// user turn): chat, anthropic, responses, ai_sdk, langchain.
	Shape string
	// Usage is the provider's count of the last model call (see Usage),
	// for the first Usage.Messages messages of the history compacted: the
	// caller's list when it owns it; else the store's active history,
	// which is the caller's list when the caller sends back what Compress
	// returned with the new messages appended.
	Usage *Usage
}

// Compress compacts a conversation (docs/spec.md#compress). history is its
// messages in any shape of docs/spec.md#message-shapes (OpenAI Chat,
// Anthropic, OpenAI Responses, AI SDK, LangChain); messages without an id get
// a derived one, messages without created_at are dated at the compaction's
// now.
//
// By default the store owns the history: messages of history the store
// holds nowhere yet (neither active nor in recall) are appended to its
// active history, and the store's active history is compacted — what the
// caller sent, less what earlier compactions moved to recall, behind
// their clip-archive — and returned (history nil: just the store's). With
// CompressOptions.CallerOwned the caller owns it (see there).
//
// Goroutines may compact the same conversation on one Compactor: its
// compactions take turns, each reading the stored history the one before
// committed, so they never conflict (other conversations go on beside
// them). A compaction that another process committed first is a Result
// with FailureCode "commit_conflict", which does not count toward the
// circuit breaker.
func (c *Compactor) Compress(ctx context.Context, conversationID string, history []json.RawMessage, opts *CompressOptions) (*Result, error) {
	return c.compressOn(ctx, c.pool, conversationID, history, opts)
}

// compressOn is Compress on the instances of pool. A dry run holds the
// conversation's lock only while it reads the stored history: it commits
// nothing, so a compaction of the conversation may go on beside it.
func (c *Compactor) compressOn(ctx context.Context, pool *wasmhost.Pool, conversationID string, history []json.RawMessage, opts *CompressOptions) (*Result, error) {
	release, err := c.conversations.lock(ctx, conversationID)
	if err != nil {
		return nil, fmt.Errorf("clipfold: compress %q: waiting for the compaction of this conversation under way: %w", conversationID, err)
	}
	defer release()
	in, indexWarning, err := c.compressInput(ctx, conversationID, history, opts)
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.DryRun {
		release()
	}
	return c.runCompress(ctx, pool, conversationID, in, indexWarning, opts, release)
}

// compressInput is compress's input: for a store-owned history, the
// messages of history the store holds nowhere appended first, then the
// store's active history. The caller holds the conversation's lock.
func (c *Compactor) compressInput(ctx context.Context, conversationID string, history []json.RawMessage, opts *CompressOptions) (in map[string]any, indexWarning string, err error) {
	in = map[string]any{"conversation_id": conversationID}
	switch {
	case opts != nil && opts.CallerOwned:
		in["history_owner"] = "caller"
	default:
		appended := 0
		if history != nil {
			if appended, err = c.sync(ctx, conversationID, history); err != nil {
				return nil, "", err
			}
		}
		// The store's active history is what a store-owned compaction
		// works on: the caller's list with the messages compacted before
		// left out (a caller that sends its whole list every turn gets the
		// compacted view back), under the ids the store keeps them (derived
		// ids of identical messages depend on which of them a list holds).
		active, err := c.store.ActiveMessages(ctx, conversationID)
		if err != nil {
			return nil, "", err
		}
		if err := indexActive(ctx, c.store, conversationID, active, appended); err != nil {
			// The appended messages stay searchable by their content.
			indexWarning = "search index: the messages just appended are searched by their text alone: " + err.Error()
			c.warn(indexWarning)
		}
		history = make([]json.RawMessage, len(active))
		ids := make([]string, len(active))
		for i := range active {
			history[i] = active[i].Raw
			ids[i] = active[i].ID
		}
		in["history_ids"] = ids
	}
	in["history"] = rawArray(history)
	if opts != nil {
		if opts.OnlyIfDue {
			in["only_if_due"] = true
		}
		if opts.Shape != "" {
			in["shape"] = opts.Shape
		}
		if opts.Usage != nil {
			in["usage"] = opts.Usage
		}
		if opts.Config != nil {
			in["config"] = mergeConfig(c.config, opts.Config)
		}
		if opts.DryRun {
			in["dry_run"] = true
		}
		if !opts.Now.IsZero() {
			in["now"] = opts.Now.UTC().Format(time.RFC3339Nano)
		}
		if opts.OperationID != "" {
			in["operation_id"] = opts.OperationID
		}
	}
	return in, indexWarning, nil
}

// runCompress runs compress on in, releases the conversation's lock, and
// embeds what a compaction archived.
func (c *Compactor) runCompress(ctx context.Context, pool *wasmhost.Pool, conversationID string, in map[string]any, indexWarning string, opts *CompressOptions, release func()) (*Result, error) {
	var out Result
	if err := c.callOn(ctx, pool, "compress", in, &out); err != nil {
		return nil, err
	}
	release() // committed (or not): embedding needs no turn
	if indexWarning != "" {
		out.Warnings = append(out.Warnings, indexWarning)
	}
	if c.embedder != nil && !out.Failed && out.MessagesCompressed > 0 && (opts == nil || !opts.DryRun) {
		// After the commit, outside it: a failure loses nothing.
		if _, err := store.EmbedMissing(ctx, c.store, c.embedder, conversationID); err != nil {
			w := "embeddings: the archived messages and batches are not embedded yet (search embeds them later): " + err.Error()
			out.Warnings = append(out.Warnings, w)
			c.warn(w)
		}
	}
	return &out, nil
}

func (c *Compactor) warn(msg string) {
	if c.logger != nil {
		c.logger.Warn(msg, "source", "clipfold")
	}
}

// DecodeHistory reads messages in any shape with the plug-in's own
// decoder (package api, natively) into what a store keeps of them: each
// message's id (given, or derived in conversationID as compress derives
// it), role as clipfold reads it, text, time (zero when it has none) and
// exact JSON.
func DecodeHistory(conversationID string, history []json.RawMessage) ([]store.Message, error) {
	msgs, _, err := api.DecodeHistory(conversationID, rawArray(history))
	if err != nil {
		return nil, fmt.Errorf("clipfold: %w", err)
	}
	out := make([]store.Message, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		out[i] = store.Message{ID: m.ID, ConversationID: m.ConversationID, Role: m.Role.String(),
			Content: m.Content, Raw: json.RawMessage(m.Raw)}
		if m.HasCreatedAt {
			out[i].CreatedAt = m.CreatedAt
		}
	}
	return out, nil
}

// sync appends the messages of history that the conversation holds
// nowhere (neither active nor in its recall storage), decoded by the
// plug-in's own decoder, in one store transaction (store.AppendNew): a
// process syncing the same list at the same time appends nothing twice.
// Message ids are unique within a conversation only: another
// conversation's message of the same id is another message.
func (c *Compactor) sync(ctx context.Context, conversationID string, history []json.RawMessage) (int, error) {
	msgs, err := DecodeHistory(conversationID, history)
	if err != nil {
		return 0, err
	}
	appended, err := c.store.AppendNew(ctx, conversationID, msgs)
	return len(appended), err
}

// IndexActive gives the conversation's active messages what the search
// index holds for them after appended of them were appended to st (as
// Compress does after its sync): for hosts that append to a store
// themselves (store.Store.AppendNew), such as the command. See
// indexActive.
func IndexActive(ctx context.Context, st store.Store, conversationID string, appended int) error {
	if appended <= 0 {
		return nil
	}
	active, err := st.ActiveMessages(ctx, conversationID)
	if err != nil {
		return err
	}
	return indexActive(ctx, st, conversationID, active, appended)
}

// indexActive gives the conversation's active messages what the search
// index holds for them (store.Store.IndexActive) after appended of them
// were appended: the plug-in's rendering (core.MessageSearchTextAt) over
// the stored active history, for the appended messages and the one
// before them, decoded over the window core.ActiveIndexRange says, and
// matched to the stored messages by position (SCHEMA.md, "messages").
func indexActive(ctx context.Context, st store.Store, conversationID string, active []store.Message, appended int) error {
	if appended <= 0 || len(active) == 0 {
		return nil
	}
	from, index := core.ActiveIndexRange(len(active), appended)
	raws := make([]json.RawMessage, 0, len(active)-from)
	for _, m := range active[from:] {
		raws = append(raws, m.Raw)
	}
	msgs, _, err := api.DecodeHistory(conversationID, rawArray(raws))
	if err != nil {
		return err
	}
	texts := make(map[string]string, len(active)-index)
	for k := index; k < len(active); k++ {
		texts[active[k].ID] = core.MessageSearchTextAt(msgs, k-from)
	}
	return st.IndexActive(ctx, conversationID, texts)
}

// ContextMessages decodes a caller's messages (any shape) into what a
// search indexes for them: for store.SearchOptions.InContext, when the
// caller keeps its messages (CompressOptions.CallerOwned) and the store
// holds no active history for them. Each has its id (given or derived),
// role, text, time and SearchText, as the plug-in renders them.
func ContextMessages(conversationID string, history []json.RawMessage) ([]store.Message, error) {
	msgs, _, err := api.DecodeHistory(conversationID, rawArray(history))
	if err != nil {
		return nil, fmt.Errorf("clipfold: %w", err)
	}
	out := make([]store.Message, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		out[i] = store.Message{ID: m.ID, ConversationID: conversationID, Role: m.Role.String(), Content: m.Content,
			SearchText: core.MessageSearchTextAt(msgs, i)}
		if m.HasCreatedAt {
			out[i].CreatedAt = m.CreatedAt
		}
	}
	return out, nil
}

// Search finds what compaction archived — summaries and the original
// messages in recall storage — and what is still in the context (hits
// InContext: the store's active history, or opts.InContext, see
// ContextMessages) by a question asked in plain words, best hit first. With Options.Embedder (unless opts sets its own) the
// question is also matched by meaning; when the embeddings provider
// fails, the search answers lexically and the Logger hears why (unless
// opts.Warn is set).
func (c *Compactor) Search(ctx context.Context, query string, opts store.SearchOptions) ([]store.Hit, error) {
	if opts.Embedder == nil {
		opts.Embedder = c.embedder
	}
	if opts.Warn == nil && opts.Embedder != nil {
		opts.Warn = func(err error) { c.warn(err.Error()) }
	}
	return c.store.Search(ctx, query, opts)
}

// MemoryRead is the answer of a memory_read tool call (the
// buildMemoryRead export): Text for the model, within the budget; the
// ids of the hits shown whole, in part (Passage) and left out.
type MemoryRead struct {
	Text    string   `json:"text"`
	Tokens  int      `json:"tokens"`
	Whole   []string `json:"whole"`
	Passage *string  `json:"passage"`
	LeftOut []string `json:"left_out"`
}

// MemoryRead answers a memory_read tool call: Search's hits for query,
// worded for a model within maxTokens (0: 1,000; at least 100) counted as
// the window is (the Compactor's token_estimator): whole hits first, then
// the best passage of the next, then what was left out and how to read it.
func (c *Compactor) MemoryRead(ctx context.Context, query string, opts store.SearchOptions, maxTokens int) (*MemoryRead, error) {
	hits, err := c.Search(ctx, query, opts)
	if err != nil {
		return nil, err
	}
	type hitJSON struct {
		Kind      string   `json:"kind"`
		ID        string   `json:"id"`
		Role      string   `json:"role,omitempty"`
		Start     string   `json:"start_time,omitempty"`
		End       string   `json:"end_time,omitempty"`
		Score     float64  `json:"score"`
		Text      string   `json:"text"`
		InContext bool     `json:"in_context"`
		Sources   []string `json:"source_message_ids,omitempty"`
	}
	in := make([]hitJSON, 0, len(hits))
	for _, h := range store.ReadHits(hits) {
		in = append(in, hitJSON{Kind: h.Kind, ID: h.ID, Role: h.Role, Start: h.Start, End: h.End, Score: h.Score, Text: h.Text,
			InContext: h.InContext, Sources: h.Sources})
	}
	input := map[string]any{"query": query, "hits": in}
	if maxTokens != 0 {
		input["max_tokens"] = maxTokens
	}
	var out MemoryRead
	if err := c.call(ctx, "buildMemoryRead", input, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func rawArray(msgs []json.RawMessage) json.RawMessage {
	if msgs == nil {
		return json.RawMessage("[]")
	}
	b := []byte{'['}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}

// mergeConfig lays over on top of base (a JSON object, or nil).
func mergeConfig(base []byte, over map[string]any) map[string]any {
	out := map[string]any{}
	if base != nil {
		_ = json.Unmarshal(base, &out) // base came from json.Marshal of a map
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
