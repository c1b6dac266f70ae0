/**
 * MemoryStore: an in-memory store answering memory_list and
 * compaction_commit with SPEC §5's rules. Messages removed by a compaction
 * move to a recall map (never destroyed); archival blocks are searchable.
 * @module
 */
import { HostError } from './errors.js';

/**
 * @typedef {import('./types.js').Message} Message
 * @typedef {import('./types.js').CommitInput} CommitInput
 * @typedef {{id: string, label: string, content: string, tier: string, reason: string, conversation_id: string, operation_id: string}} StoredBlock
 * @typedef {{message: Message, conversation_id: string, operation_id: string}} Recalled
 */

export class MemoryStore {
  /** @type {Map<string, Message[]>} active history per conversation */
  #active = new Map();
  /** @type {Map<string, Recalled>} removed messages by id */
  #recall = new Map();
  /** @type {Map<string, StoredBlock>} archival blocks by id, in insertion order */
  #blocks = new Map();
  #nextBlock = 1;
  /** @type {Set<string>} operation ids already committed */
  #operations = new Set();

  /**
   * Appends messages to a conversation's active history.
   * @param {string} conversationId
   * @param {Message[]} messages
   */
  append(conversationId, messages) {
    const h = this.#active.get(conversationId) ?? [];
    for (const m of messages) h.push(structuredClone(m));
    this.#active.set(conversationId, h);
  }

  /**
   * The active history (a copy).
   * @param {string} conversationId
   * @returns {Message[]}
   */
  history(conversationId) {
    return structuredClone(this.#active.get(conversationId) ?? []);
  }

  /**
   * A removed message, by id.
   * @param {string} messageId
   * @returns {Recalled | undefined}
   */
  recall(messageId) {
    const r = this.#recall.get(messageId);
    return r && structuredClone(r);
  }

  /**
   * memory_list: the blocks of `tier` whose label starts with label_prefix,
   * in the order they were written.
   * @param {{tier?: string, label_prefix?: string}} req
   */
  list(req) {
    if (!req || typeof req !== 'object') throw new HostError('invalid_request', 'memory_list: input must be an object');
    const tier = req.tier ?? 'archival';
    const prefix = req.label_prefix ?? '';
    if (typeof tier !== 'string' || typeof prefix !== 'string') {
      throw new HostError('invalid_request', 'memory_list: tier and label_prefix must be strings');
    }
    const blocks = [];
    for (const b of this.#blocks.values()) {
      if (b.tier === tier && b.label.startsWith(prefix)) blocks.push({ id: b.id, label: b.label, content: b.content });
    }
    return { blocks };
  }

  /**
   * compaction_commit: every archive write, archive delete, message removal
   * and the insert, or none of them. A remove id missing from the
   * conversation's active history, or a delete id that is not an archived
   * block, is a conflict (another compaction won) and changes nothing.
   * @param {CommitInput} req
   */
  commit(req) {
    const bad = (/** @type {string} */ what) => { throw new HostError('invalid_request', `compaction_commit: ${what}`); };
    if (!req || typeof req !== 'object') bad('input must be an object');
    const conv = req.conversation_id;
    if (typeof conv !== 'string' || conv === '') bad('conversation_id: must be a non-empty string');
    const writes = req.archive_writes ?? [];
    const deletes = req.archive_deletes ?? [];
    const removes = req.remove_message_ids ?? [];
    if (!Array.isArray(writes) || !Array.isArray(deletes) || !Array.isArray(removes)) {
      bad('archive_writes, archive_deletes and remove_message_ids must be arrays');
    }
    writes.forEach((w, i) => {
      if (!w || typeof w.label !== 'string' || typeof w.content !== 'string') bad(`archive_writes[${i}]: label and content must be strings`);
    });
    const insert = req.insert_message ?? null;
    if (insert !== null && (typeof insert !== 'object' || Array.isArray(insert))) bad('insert_message: must be a message object');

    // Validate everything before changing anything.
    const active = this.#active.get(conv) ?? [];
    const activeIds = new Set(active.map((m) => m.id));
    const removeSet = new Set(removes);
    for (const id of removeSet) {
      if (!activeIds.has(id)) {
        throw new HostError('conflict', `compaction_commit: message ${JSON.stringify(id)} is not in conversation ${JSON.stringify(conv)}'s active history (another compaction may have removed it)`);
      }
    }
    const deleteSet = new Set(deletes);
    for (const id of deleteSet) {
      if (!this.#blocks.has(id)) {
        throw new HostError('conflict', `compaction_commit: archive block ${JSON.stringify(id)} does not exist (another compaction may have deleted it)`);
      }
    }

    // Apply (nothing below can fail).
    const op = typeof req.operation_id === 'string' ? req.operation_id : '';
    for (const id of deleteSet) this.#blocks.delete(id);
    for (const w of writes) {
      const id = `blk_${this.#nextBlock++}`;
      this.#blocks.set(id, {
        id, label: w.label, content: w.content, tier: w.tier ?? 'archival', reason: w.reason ?? '',
        conversation_id: conv, operation_id: op,
      });
    }
    const kept = [];
    for (const m of active) {
      if (removeSet.has(/** @type {string} */ (m.id))) this.#recall.set(/** @type {string} */ (m.id), { message: m, conversation_id: conv, operation_id: op });
      else kept.push(m);
    }
    if (insert !== null) kept.unshift(structuredClone(insert));
    this.#active.set(conv, kept);
    if (op) this.#operations.add(op);
    return { ok: true };
  }

  /**
   * Ranked search over archived blocks and recalled messages (the
   * `memory_read` the clip-archive points to): the number of query words a
   * text contains, ties in insertion order.
   * @param {string} query
   * @param {{conversationId?: string, limit?: number}} [opts]
   * @returns {{kind: 'block'|'message', id: string, score: number, text: string}[]}
   */
  search(query, { conversationId, limit = 10 } = {}) {
    const words = [...new Set(String(query).toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter(Boolean))];
    /** @type {{kind: 'block'|'message', id: string, score: number, text: string}[]} */
    const hits = [];
    const score = (/** @type {string} */ text) => {
      const t = text.toLowerCase();
      return words.reduce((n, w) => n + (t.includes(w) ? 1 : 0), 0);
    };
    for (const b of this.#blocks.values()) {
      if (conversationId && b.conversation_id !== conversationId) continue;
      const s = score(b.content);
      if (s > 0) hits.push({ kind: 'block', id: b.id, score: s, text: b.content });
    }
    for (const [id, r] of this.#recall) {
      if (conversationId && r.conversation_id !== conversationId) continue;
      const c = r.message.content;
      const text = typeof c === 'string' ? c : Array.isArray(c) ? c.filter((p) => p?.type === 'text').map((p) => p.text).join('\n') : '';
      const s = score(text);
      if (s > 0) hits.push({ kind: 'message', id, score: s, text });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  /**
   * A deep copy of the whole state, for comparisons.
   */
  snapshot() {
    return structuredClone({
      active: Object.fromEntries(this.#active),
      recall: Object.fromEntries(this.#recall),
      blocks: [...this.#blocks.values()],
      nextBlock: this.#nextBlock,
      operations: [...this.#operations],
    });
  }
}
