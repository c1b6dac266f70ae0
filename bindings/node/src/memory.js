/**
 * memory_read (docs/spec.md#search) for agents: what the framework adapters' tools
 * run. Framework-free: the search is the compactor's (the plug-in's
 * searchQuery export, the store's ranked search, the caller's context
 * ranked with it), the reading by id the store's, and the wording within a
 * token budget the plug-in's buildMemoryRead.
 * @module
 */

/**
 * @typedef {import('./types.js').SearchHit} SearchHit
 * @typedef {import('./types.js').ReadRecord} ReadRecord
 * @typedef {import('./types.js').MemoryReadResult} MemoryReadResult
 * @typedef {{
 *   search(query: string, o?: {conversationId?: string, limit?: number, inContext?: unknown[] | null}): Promise<SearchHit[]>,
 *   read(id: string, o?: {conversationId?: string}): Promise<ReadRecord | null>,
 *   buildMemoryRead(query: string, hits: Record<string, unknown>[], o?: {maxTokens?: number, byId?: boolean}): Promise<MemoryReadResult>,
 * }} Searcher
 */

/** The tool's name, as the clip-archive names it ("searchable via memory_read"). */
export const MEMORY_READ_NAME = 'memory_read';

/** What the tool tells the model it does. */
export const MEMORY_READ_DESCRIPTION = 'Search the memory of this conversation: the summaries of older turns and the original '
  + 'messages compaction removed (the context summary at the top of the conversation says what it holds), and what is still '
  + 'in your context. Ask a question in plain words ("query"); each hit gives its id, kind, time and text, within a token '
  + 'budget. To read one hit, call again with its "id" (and a "query" for the part about it).';

/** The most hits a call considers when it names no limit (the budget decides how many are shown). */
export const MEMORY_READ_LIMIT = 10;

/**
 * A record read by id as a hit for buildMemoryRead.
 * @param {ReadRecord} r
 * @returns {Record<string, unknown>}
 */
function recordHit(r) {
  if (r.kind === 'batch') {
    const b = r.block.batch;
    return b ? { kind: 'batch', id: r.block.id, text: b.summary, start_time: b.start_time, end_time: b.end_time, source_message_ids: b.source_message_ids }
      : { kind: 'batch', id: r.block.id, text: r.block.content, created_at: r.block.created_at };
  }
  return { kind: 'message', id: r.id, role: r.role, created_at: r.created_at, text: r.raw };
}

/**
 * Runs memory_read: a search by `query`, or one record by `id`, answered
 * within `maxTokens` (default 1,000) by the plug-in's buildMemoryRead:
 * whole hits first, then the best passage of the next, then what was left
 * out and how to read it. `inContext`: the messages in the model's context
 * (caller-owned: the store never holds them), searched with the archive.
 * Returns the answer as text for the model (never throws for a question
 * that finds nothing).
 * @param {Searcher} compactor
 * @param {{query?: string | null, id?: string | null, limit?: number | null, conversationId?: string,
 *   maxTokens?: number, inContext?: unknown[] | null}} input
 * @returns {Promise<string>}
 */
export async function memoryRead(compactor, { query, id, limit, conversationId, maxTokens, inContext } = {}) {
  const q = String(query ?? '').trim();
  if (id) {
    const r = await compactor.read(String(id), { conversationId });
    if (!r) return `No archived message or summary has the id ${JSON.stringify(id)}.`;
    return (await compactor.buildMemoryRead(q, [recordHit(r)], { maxTokens, byId: true })).text;
  }
  if (!q) return 'Give a "query" (a question in plain words) or an "id" to read.';
  const n = typeof limit === 'number' && limit > 0 ? Math.min(Math.floor(limit), 50) : MEMORY_READ_LIMIT;
  const context = conversationId && Array.isArray(inContext) && inContext.length > 0 ? inContext : undefined;
  const hits = await compactor.search(q, { conversationId, limit: n, inContext: context });
  return (await compactor.buildMemoryRead(q, /** @type {any} */ (hits), { maxTokens })).text;
}

/**
 * @param {(string | null | undefined)[]} parts
 * @returns {string | null}
 */
export function joinText(...parts) {
  const text = parts.filter((p) => typeof p === 'string' && p.trim() !== '').join('\n\n');
  return text || null;
}
