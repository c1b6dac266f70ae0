/**
 * JSDoc types of clipfold's wire format (SPEC §2, §4, §5). This module
 * exports nothing at run time; import the types with
 * `@typedef {import('@clipfold/node-host/src/types.js').Message} Message`.
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
 * The [summarization] keys (SPEC §2); every key is optional.
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
 * @property {number} [max_chunk_tokens]
 * @property {number} [max_consecutive_failures]
 * @property {number} [breaker_cooldown_ms]
 * @property {number} [context_budget]
 * @property {number} [model_max_tokens]
 * @property {number} [target_tokens]
 * @property {'none'|'extractive'} [fallback]
 * @property {'llm'|'extractive'} [summarizer] "extractive": compress summarizes inside the plug-in (dated lines) and never calls llm_complete
 * @property {string} [model]
 * @property {boolean} [pin_system]
 * @property {number} [max_message_chars]
 */

/**
 * What compress returns (SPEC §4).
 * @typedef {object} CompactionResult
 * @property {Message[]} history          `[clip-archive, …kept]`, or the input when failed
 * @property {number} batches_created
 * @property {number} messages_compressed
 * @property {number} tokens_estimate_before
 * @property {number} tokens_estimate_after
 * @property {boolean} failed
 * @property {null|'llm_failed'|'llm_timeout'|'breaker_open'|'commit_conflict'|'host_error'|'deadline_exceeded'|'invalid_summary'|'no_gain'} failure_code
 * @property {string|null} failure_message
 * @property {string} operation_id
 * @property {number} llm_calls
 * @property {Batch[]} batches            the batches this compaction wrote
 * @property {string[]} warnings
 * @property {number} consecutive_failures
 * @property {CommitInput} [commit]        dry_run only: what would have been committed
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
 * @typedef {object} CommitInput
 * @property {string} conversation_id
 * @property {string} operation_id
 * @property {{label: string, content: string, tier: string, reason?: string}[]} archive_writes
 * @property {string[]} archive_deletes
 * @property {string[]} remove_message_ids
 * @property {Message} insert_message
 */

/**
 * Answers memory_list and compaction_commit (sync or async).
 * `commit` must be all-or-nothing and answer `conflict` when an id to
 * remove or delete no longer exists. `history`, when present, lets
 * `compress(conversationId)` run without passing the history.
 * @typedef {object} Store
 * @property {(req: {tier: string, label_prefix: string}) => {blocks: ArchiveBlock[]} | HostErrorObject | Promise<{blocks: ArchiveBlock[]} | HostErrorObject>} list
 * @property {(req: CommitInput) => {ok: true} | HostErrorObject | Promise<{ok: true} | HostErrorObject>} commit
 * @property {(conversationId: string) => Message[] | Promise<Message[]>} [history]
 */

/**
 * @typedef {object} HostCallEvent
 * @property {'llm_complete'|'memory_list'|'compaction_commit'} name
 * @property {unknown} input
 * @property {unknown} output
 * @property {number} ms
 */

export {};
