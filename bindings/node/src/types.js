/**
 * JSDoc types of clipfold's wire format (docs/spec.md#wire-types,
 * docs/spec.md#compress, docs/spec.md#host-functions). This module
 * exports nothing at run time; import the types with
 * `import type { Message } from 'clipfold'` (TypeScript) or
 * `@typedef {import('clipfold').Message} Message` (JSDoc).
 * @module
 */

/**
 * @typedef {object} ContentPart
 * @property {string} type  `"text"` parts are read; others are ignored
 * @property {string} [text]
 */

/**
 * A conversation message. Unknown fields are kept: every message the
 * plug-in returns from the input comes back byte-for-byte as sent.
 * @typedef {object} Message
 * @property {string} [id]               required by compress
 * @property {string} [conversation_id]
 * @property {'user'|'assistant'|'system'|'tool'} role
 * @property {string | ContentPart[]} content
 * @property {unknown} [tool_calls]      OpenAI-style array
 * @property {string} [tool_call_id]
 * @property {string} [created_at]       RFC 3339; required by compress
 * @property {boolean} [pinned]          never compacted
 */

/**
 * One archived summary.
 * @typedef {object} Batch
 * @property {string} content
 * @property {number} depth               0 = summary of raw messages
 * @property {string} start_time
 * @property {string} end_time
 * @property {number} message_count
 * @property {string[]} source_message_ids
 * @property {string} operation_id
 * @property {'llm'|'extractive'} method
 */

/**
 * The [summarization] keys (docs/spec.md#config); every key is optional.
 * @typedef {object} Config
 * @property {number} [chunk_size]
 * @property {number} [keep_recent]
 * @property {number} [max_summary_tokens]
 * @property {number} [clip_first]
 * @property {number} [clip_last]
 * @property {string|null} [prompt]
 * @property {number} [role_weight_system]
 * @property {number} [role_weight_user]
 * @property {number} [role_weight_assistant]
 * @property {number} [recency_decay]
 * @property {number} [question_bonus]
 * @property {number} [tool_call_bonus]
 * @property {number} [keyword_bonus]
 * @property {number} [content_length_weight]
 * @property {string[]} [important_keywords]
 * @property {number} [compaction_timeout]      ms
 * @property {number} [compaction_max_retries]
 * @property {number} [backoff_base_ms]
 * @property {number | 'auto'} [max_chunk_tokens] "auto": what one summarization request holds (the default of compress with a model summarizing)
 * @property {number} [max_consecutive_failures]
 * @property {number} [breaker_cooldown_ms]
 * @property {number} [context_budget]
 * @property {number} [model_max_tokens]
 * @property {number} [target_tokens]
 * @property {number} [prepare_at]         the soft threshold, a share of the limit in (0, 1] (default 0.7): over it
 *   compactAhead prepares a compaction in the background (docs/spec.md#compaction-ahead-of-time)
 * @property {'none'|'extractive'} [fallback]
 * @property {'llm'|'extractive'} [summarizer] "extractive": compress summarizes inside the plug-in (dated lines) and never calls llm_complete
 * @property {string} [model]
 * @property {boolean} [pin_system]
 * @property {number} [max_message_chars]
 * @property {'conservative'|'chars4'} [token_estimator] how tokens are counted (default "conservative": never below
 *   a real tokenizer's count; "chars4": the seeds' ⌈code points / 4⌉)
 * @property {number} [image_tokens]       tokens counted per image, document, file or audio part (default 1600)
 * @property {number} [overhead_tokens]    tokens sent beside the messages (system prompt, tool schemas), added to every
 *   count without the provider's usage (see overheadTokens)
 * @property {number|null} [clear_tool_results] keep this many of the most recent tool results whole and clear the
 *   older ones (one line naming the tool, its arguments and the recall id) before anything is summarized
 * @property {string[]|null} [clear_exclude_tools] tools whose results are never cleared
 */

/**
 * The provider's count of the last model call (docs/spec.md#counting-tokens-and-the-window):
 * `input_tokens` for a request that held the first
 * `messages` messages of the history now checked or compacted (system
 * prompt and tools included). Those messages count `input_tokens`; only
 * the rest is estimated.
 * @typedef {object} ContextUsage
 * @property {number} input_tokens
 * @property {number} messages
 */

/**
 * shouldCompact's answer (docs/spec.md#shouldcompact), as countContext gives it too.
 * @typedef {object} ContextCount
 * @property {boolean} due             `tokens > limit`
 * @property {number} tokens           the history's count (usage and overhead_tokens included)
 * @property {number} limit            ⌊context_budget × model_max_tokens⌋
 * @property {number} prepare_limit    the soft threshold, ⌊prepare_at × limit⌋: over it a compaction is prepared ahead
 *   of time (docs/spec.md#compaction-ahead-of-time)
 */

/**
 * What compactAhead did before a model call (docs/spec.md#compaction-ahead-of-time).
 * @typedef {object} AheadResult
 * @property {any[]} history           what to send the model: the messages given (caller-owned: their compacted view;
 *   store-owned: the store's active history), compacted when a compaction was applied
 * @property {number} tokens           shouldCompact's count of `history`
 * @property {number} limit
 * @property {number} prepare_limit
 * @property {CompactionResult | null} compaction the compaction applied at this call (prepared in the background, or
 *   run now at the limit), null when none was
 * @property {boolean} prepared        `compaction` was prepared in the background
 * @property {number} waited_ms        how long this call waited for a compaction (the rest of one under way, or one run
 *   at the limit), in milliseconds
 * @property {boolean} started         a compaction started in the background at this call
 * @property {string | null} discarded why a prepared compaction was dropped (the history changed under it, another
 *   compaction won, it had nothing to apply), null when none was
 */

/**
 * What compress returns (docs/spec.md#compactionresult).
 * @typedef {object} CompactionResult
 * @property {any[]} history              `[clip-archive, …kept]` in the input's shape, or the input when failed
 * @property {number} batches_created
 * @property {number} messages_compressed
 * @property {number} tokens_estimate_before
 * @property {number} tokens_estimate_after
 * @property {boolean} failed
 * @property {null|'llm_failed'|'llm_timeout'|'breaker_open'|'commit_conflict'|'host_error'|'deadline_exceeded'|'invalid_summary'|'no_gain'|'over_window'} failure_code
 * @property {string|null} failure_message
 * @property {string} operation_id
 * @property {number} llm_calls
 * @property {Batch[]} batches            the batches this compaction wrote
 * @property {string[]} warnings
 * @property {number} consecutive_failures
 * @property {number} tool_results_cleared kept tool results cleared to fit the window (one line naming the tool, its
 *   arguments and the recall id of the full output; the original in recall storage)
 * @property {number} messages_truncated   kept messages middle-truncated to fit the window (the original in recall)
 * @property {CommitInput} [commit]        dry_run only: what would have been committed
 * @property {string|null} clip_archive   the text of the clip-archive the history starts with (null: none), for
 *   callers that put it in a system prompt
 */

/**
 * @typedef {object} ModelMessage
 * @property {'system'|'user'|'assistant'} role
 * @property {string | ContentPart[]} content
 */

/**
 * The provider-neutral request llm_complete receives.
 * @typedef {object} ModelRequest
 * @property {string} system
 * @property {ModelMessage[]} messages
 * @property {string} [model]
 * @property {number} [max_tokens]
 * @property {number} [temperature]
 * @property {number} [timeout_ms]       time left before the compaction's deadline
 */

/**
 * @typedef {object} ModelResponse
 * @property {{type: string, text?: string}[]} content
 * @property {string} [stop_reason]
 * @property {{input_tokens: number, output_tokens: number}} [usage]
 */

/**
 * A host failure. `code` for the LLM: timeout, rate_limited, unavailable,
 * context_overflow, invalid_request, auth, other; for a commit: conflict.
 * @typedef {{error: {code: string, message: string, retryable: boolean}}} HostErrorObject
 */

/**
 * Answers llm_complete: a function, or an object with `complete`. It may
 * return (or resolve to) a ModelResponse or a HostErrorObject, or throw a
 * HostError.
 * @typedef {((req: ModelRequest) => ModelResponse | HostErrorObject | Promise<ModelResponse | HostErrorObject>)
 *   | {complete(req: ModelRequest): ModelResponse | HostErrorObject | Promise<ModelResponse | HostErrorObject>}} LLM
 */

/**
 * @typedef {object} ArchiveBlock
 * @property {string} id
 * @property {string} label
 * @property {string} content
 */

/**
 * What compaction_commit receives (docs/spec.md#compaction_commit).
 * @typedef {object} CommitInput
 * @property {string} conversation_id
 * @property {string} operation_id
 * @property {{label: string, content: string, tier?: string, reason?: string}[]} [archive_writes]
 * @property {string[]} [archive_deletes]
 * @property {string[]} [remove_message_ids]
 * @property {Message|null} insert_message      the clip-archive, put before the remaining history; null when the commit
 *   summarized nothing and only replaces messages
 * @property {Record<string, string>} [search_text] message id → the text to index for it once recalled
 *   (its text, tool names, tool inputs and outputs); "" for a superseded clip-archive
 * @property {Record<string, unknown>} [insert_raw] the clip-archive as compress returns it, in the history's shape:
 *   what a store that keeps the active history stores for it
 * @property {'store'|'caller'} [history_owner] docs/spec.md#who-owns-the-history; default "store"
 * @property {RecallWrite[]} [recall_writes] history_owner "caller": the removed messages, each to be written to
 *   recall storage once (remove_message_ids is then empty)
 * @property {ReplaceMessage[]} [replace_messages] history_owner "store": kept messages replaced in place
 */

/**
 * One kept message a store-owned commit replaces in place (a tool result
 * cleared, a message truncated): `id` moves to recall storage (an original
 * recall already holds stays), and its row takes `new_id`, `role`,
 * `content` and `message`, at the same position and time.
 * @typedef {object} ReplaceMessage
 * @property {string} id
 * @property {string} new_id        `id` itself when the message has its own id, else the replacement's derived id
 * @property {'user'|'assistant'|'system'|'tool'} role
 * @property {string} content
 * @property {Record<string, unknown>} message the replacement's exact JSON
 */

/**
 * One message a caller-owned compaction removed.
 * @typedef {object} RecallWrite
 * @property {string} id            given or derived
 * @property {'user'|'assistant'|'system'|'tool'} role
 * @property {string} content       its text
 * @property {string|null} created_at
 * @property {string} search_text   what to index for it
 * @property {Record<string, unknown>} message the message itself
 */

/**
 * The searchQuery export's analysis of a question (docs/spec.md#searchquery).
 * @typedef {object} SearchQuery
 * @property {string[]} terms   the folded, stemmed words
 * @property {string} fts5      an FTS5 MATCH expression ("" = nothing to search for)
 * @property {string} tsquery   the same for PostgreSQL's to_tsquery
 */

/**
 * Analyses a natural-language query: the plug-in's searchQuery export.
 * @typedef {(query: string) => SearchQuery | Promise<SearchQuery>} QueryAnalyzer
 */

/**
 * @typedef {object} SearchOptions
 * @property {string} [conversationId] only hits of this conversation
 * @property {number} [limit]          at most this many hits (default 20, at most 1000)
 * @property {ContextMessage[] | null} [inContext] the messages in the context of a caller-owned conversation, as the
 *   decodeHistory export with `search_text` gives them: ranked with everything else for this search only
 */

/**
 * One search hit (memory_read, docs/spec.md#search). `text` is the hit's full text: a
 * message's indexed text (with its tool calls and results), a batch's
 * summary. Times are RFC 3339 UTC with milliseconds ('' when unknown).
 * @typedef {object} SearchHit
 * @property {'message'|'batch'} kind
 * @property {string} id                     read it in full with store.read(id)
 * @property {string} conversation_id
 * @property {string} start_time             a message's created_at; a batch's earliest covered message
 * @property {string} end_time               a message's created_at; a batch's latest covered message
 * @property {number} score                  higher is better (negated BM25)
 * @property {string} snippet                the matched words in [ ]
 * @property {string} text
 * @property {string} role                   a message's role; '' for a batch
 * @property {string} label                  a batch's label; '' for a message
 * @property {string} created_at             when the message was created / the block written
 * @property {string} operation_id           the compaction that removed the message / wrote the batch
 * @property {boolean} in_context            a message still in the context (the active history, or inContext): not in recall
 * @property {number|null} depth             batches: 0 = summary of raw messages
 * @property {string|null} method            batches: 'llm' or 'extractive'
 * @property {number|null} message_count     batches
 * @property {string[]|null} source_message_ids batches: the messages it summarizes
 */

/**
 * A batch's metadata, parsed from its block (docs/spec.md#archived-batches).
 * @typedef {object} BatchMeta
 * @property {number} depth
 * @property {string} start_time
 * @property {string} end_time
 * @property {number} message_count
 * @property {string[]} source_message_ids
 * @property {string} method
 * @property {string} operation_id
 * @property {string} summary   the content without the metadata line
 */

/**
 * An archival block as stored.
 * @typedef {object} StoredBlock
 * @property {string} id
 * @property {string} tier
 * @property {string} label
 * @property {string} content           as written: for a batch, the metadata line, "\n", the summary
 * @property {string} conversation_id   '' for a block written without one
 * @property {string} reason
 * @property {string} operation_id
 * @property {string} created_at        when it was written
 * @property {BatchMeta|null} batch     null when the content carries no batch metadata
 * @property {string} [malformed]       why not, when its first line is meant as batch metadata but cannot be read
 *   (the block is then read whole, as a plain one)
 */

/**
 * A message a compaction removed (recall storage).
 * @typedef {object} RecalledMessage
 * @property {Message} message      the message as it was given
 * @property {string} raw           its exact JSON text
 * @property {string} id
 * @property {string} conversation_id
 * @property {string} role
 * @property {string} created_at
 * @property {string} removed_at
 * @property {string} operation_id  the compaction that removed it
 * @property {string} text          what the search index holds for it
 */

/**
 * A message as a store keeps it: the id, role, text and time the plug-in's
 * decodeHistory export reads in a message of any shape, and its exact
 * JSON text.
 * @typedef {object} DecodedRecord
 * @property {string} id
 * @property {string} role
 * @property {string} content
 * @property {string | null} [created_at]
 * @property {string} raw
 */

/**
 * A message in a caller's context, as the decodeHistory export with
 * `search_text: true` gives it: what a search indexes for it.
 * @typedef {object} ContextMessage
 * @property {string} id
 * @property {string} role
 * @property {string} content
 * @property {string | null} [created_at]
 * @property {string | null} [search_text]
 */

/**
 * The buildMemoryRead export's answer (a memory_read tool call).
 * @typedef {object} MemoryReadResult
 * @property {string} text            the answer for the model, within the budget
 * @property {number} tokens          its estimate, as the window is counted
 * @property {string[]} whole         the hits shown whole
 * @property {string | null} passage  the hit shown in part, or null
 * @property {string[]} left_out      the hits not shown
 */

/**
 * A record read by id.
 * @typedef {({kind: 'message'} & RecalledMessage) | {kind: 'batch', block: StoredBlock}} ReadRecord
 */

/**
 * Answers memory_list and compaction_commit (sync or async).
 * `commit` must be all-or-nothing and answer `conflict` when an id to
 * remove or delete no longer exists (a caller-owned commit: only an
 * archive delete), and write a caller-owned commit's recall_writes once
 * each. `history`, when present, lets `compress(conversationId)` run
 * without passing the history; `appendNewRecords` and `activeMessages`
 * make compress store the list it is given and compact the store's active
 * history, as with SQLiteStore (a store with `appendRecords` and
 * `knownIds` instead of `appendNewRecords` is read, then appended to: two
 * processes storing the same new messages at once may then fail).
 * @typedef {object} Store
 * @property {(req: {tier: string, label_prefix: string}) => {blocks: ArchiveBlock[]} | HostErrorObject | Promise<{blocks: ArchiveBlock[]} | HostErrorObject>} list
 * @property {(req: CommitInput) => {ok: true} | HostErrorObject | Promise<{ok: true} | HostErrorObject>} commit
 * @property {(conversationId: string) => Message[] | Promise<Message[]>} [history]
 * @property {(conversationId: string, records: DecodedRecord[]) => DecodedRecord[] | Promise<DecodedRecord[]>} [appendNewRecords]
 *   appends, in order and in one transaction, the records whose id the conversation holds nowhere (neither active nor in
 *   recall; a held id is skipped whatever its content) and returns them: with activeMessages, how compress stores the
 *   list it is given (store-owned; SQLiteStore has both)
 * @property {(conversationId: string, records: DecodedRecord[]) => void | Promise<void>} [appendRecords]
 *   with knownIds and activeMessages, for a store without appendNewRecords
 * @property {(conversationId: string, ids: string[]) => Set<string> | Promise<Set<string>>} [knownIds] which of ids the
 *   conversation holds (active or in recall; ids are unique within a conversation only)
 * @property {(conversationId: string) => {id: string, raw: string}[] | Promise<{id: string, raw: string}[]>} [activeMessages]
 * @property {(query: string, opts?: SearchOptions) => SearchHit[] | Promise<SearchHit[]>} [search] for compactor.search
 *   (SQLiteStore has searchFts5, which compactor.search prefers: the compactor's plug-in analyses the query)
 * @property {(id: string, conversationId: string) => ReadRecord | null | Promise<ReadRecord | null>} [read] for
 *   compactor.read (conversationId '' when none is named)
 */

/**
 * @typedef {object} HostCallEvent
 * @property {'llm_complete'|'memory_list'|'compaction_commit'} name
 * @property {unknown} input
 * @property {unknown} output
 * @property {number} ms
 */

export {};
