/**
 * memory_read (SPEC §5) for agents: what the framework adapters' tools
 * run. Framework-free: the search is the compactor's (the plug-in's
 * searchQuery export, the store's ranked search), the reading by id the
 * store's; this only words the answer for a model.
 * @module
 */

/**
 * @typedef {import('./types.js').SearchHit} SearchHit
 * @typedef {import('./types.js').ReadRecord} ReadRecord
 * @typedef {{search(query: string, o?: import('./types.js').SearchOptions): Promise<SearchHit[]>, read(id: string, o?: {conversationId?: string}): Promise<ReadRecord | null>}} Searcher
 */

/** The tool's name, as the clip-archive names it ("searchable via memory_read"). */
export const MEMORY_READ_NAME = 'memory_read';

/** What the tool tells the model it does. */
export const MEMORY_READ_DESCRIPTION = 'Search the archive of this conversation: the summaries of older turns and the original '
  + 'messages compaction removed (the context summary at the top of the conversation says what it holds). Ask a question '
  + 'in plain words ("query"); each hit gives its id, kind, time and text. To read one hit in full, call again with its "id".';

/** The most hits a call returns when it names no limit. */
export const MEMORY_READ_LIMIT = 5;

/** @param {string} s @param {number} n */
const clip = (s, n) => ([...s].length > n ? `${[...s].slice(0, n).join('')}…` : s);

/**
 * One hit as a line for a model.
 * @param {SearchHit} h
 * @param {number} i
 */
function hitLine(h, i) {
  const when = h.start_time && h.end_time && h.start_time !== h.end_time ? `${h.start_time} – ${h.end_time}` : h.end_time || h.created_at;
  const what = h.kind === 'batch'
    ? `summary ${h.id} (${when}; ${h.message_count ?? '?'} messages: ${(h.source_message_ids ?? []).join(', ')})`
    : `message ${h.id} (${h.role}, ${when})`;
  return `${i + 1}. ${what} [score ${h.score.toFixed(2)}]\n${clip(h.text, 1200)}`;
}

/**
 * Runs memory_read: a search by `query`, or one record in full by `id`.
 * Returns the answer as text for the model (never throws for a question
 * that finds nothing).
 * @param {Searcher} compactor
 * @param {{query?: string | null, id?: string | null, limit?: number | null, conversationId?: string}} input
 * @returns {Promise<string>}
 */
export async function memoryRead(compactor, { query, id, limit, conversationId } = {}) {
  if (id) {
    const r = await compactor.read(String(id), { conversationId });
    if (!r) return `No archived message or summary has the id ${JSON.stringify(id)}.`;
    if (r.kind === 'batch') {
      const b = r.block.batch;
      return b ? `summary ${r.block.id} (${b.start_time} – ${b.end_time}; ${b.message_count} messages: ${b.source_message_ids.join(', ')})\n${b.summary}`
        : `block ${r.block.id}\n${r.block.content}`;
    }
    return `message ${r.id} (${r.role}, ${r.created_at})\n${r.raw}`;
  }
  const q = String(query ?? '').trim();
  if (!q) return 'Give a "query" (a question in plain words) or an "id" to read.';
  const n = typeof limit === 'number' && limit > 0 ? Math.min(Math.floor(limit), 50) : MEMORY_READ_LIMIT;
  const hits = await compactor.search(q, { conversationId, limit: n });
  if (hits.length === 0) return `Nothing in the archive matches ${JSON.stringify(q)}.`;
  return hits.map(hitLine).join('\n\n');
}

/**
 * @param {(string | null | undefined)[]} parts
 * @returns {string | null}
 */
export function joinText(...parts) {
  const text = parts.filter((p) => typeof p === 'string' && p.trim() !== '').join('\n\n');
  return text || null;
}
