import { existsSync, readFileSync } from 'node:fs';

const BASE = Date.parse('2026-02-28T10:00:00.000Z');
const TOPICS = [
  ['user', 'We need to migrate the billing service from MySQL to Postgres before the March 15 deadline. Budget is two engineers.'],
  ['assistant', 'Understood. I will start by inventorying the schema: 42 tables, 3 stored procedures, and the nightly export job in cron/export.sh.'],
  ['user', 'Can we keep the old read replica running during the cutover? The finance team depends on it.'],
  ['assistant', 'Yes. We agreed to keep the replica read-only until finance signs off; the constraint is that writes must go only to Postgres after cutover.'],
  ['user', 'The staging migration failed with error 1071: Specified key was too long; max key length is 767 bytes.'],
  ['assistant', 'That error comes from the utf8mb4 index on invoices.customer_email. The fix is to index a prefix or switch to a hash column.'],
  ['user', 'Decision: use a generated hash column, not a prefix index. Document it in docs/adr/0007-email-hash.md.'],
  ['assistant', 'Done. I wrote the ADR and updated the migration script migrations/0031_email_hash.sql; tests pass locally.'],
  ['user', 'thanks'],
  ['assistant', 'Next I will port the stored procedure recalc_totals to a Go job in cmd/recalc with the same rounding rules (banker\'s rounding).'],
];

/**
 * A deterministic conversation: topic messages, tool calls with their
 * results, a pinned system instruction, unknown fields, content-part
 * arrays and non-ASCII text.
 * @param {string} conversationId
 * @param {number} n number of messages (≥ 12)
 */
export function makeConversation(conversationId, n = 60) {
  /** @type {any[]} */
  const out = [];
  const at = (i) => new Date(BASE + i * 60_000).toISOString();
  out.push({ id: `${conversationId}-m0`, conversation_id: conversationId, role: 'system', content: 'You are the migration assistant. Never drop production tables.', created_at: at(0) });
  let i = 1;
  while (out.length < n) {
    const k = out.length;
    if (k % 9 === 4) {
      const callId = `call_${k}`;
      out.push({ id: `${conversationId}-m${i}`, conversation_id: conversationId, role: 'assistant', content: '',
        tool_calls: [{ id: callId, type: 'function', function: { name: 'run_sql', arguments: `{"query":"SELECT count(*) FROM invoices WHERE id > ${k}"}` } }],
        created_at: at(i) });
      i++;
      out.push({ id: `${conversationId}-m${i}`, conversation_id: conversationId, role: 'tool', tool_call_id: callId,
        content: `count\n-----\n${1000 + k * 7}\n(1 row) — scanned ${k * 311} rows in ${k % 7}.${k % 10} ms`, created_at: at(i), x_meta: { source: 'psql', rows: 1 } });
      i++;
      continue;
    }
    const [role, text] = TOPICS[k % TOPICS.length];
    const detail = `Step ${k}: checked ${k * 3} rows of invoices_${k % 5}, compared the totals with the MySQL export, and noted the ` +
      `differences in notes/step-${k}.md so that the finance review can follow every change made during the migration work.`;
    const content = k % 11 === 3 ? [{ type: 'text', text }, { type: 'text', text: `${detail} Ünïcödé ✓ 数据迁移` }] : `${text} ${detail}`;
    out.push({ id: `${conversationId}-m${i}`, conversation_id: conversationId, role, content, created_at: at(i), ...(k % 13 === 0 ? { extra: { tag: 'kept-as-is', n: 1.5 } } : {}) });
    i++;
  }
  return out.slice(0, n);
}

/**
 * Reads a bundled conversation file: a JSON array of messages, an object
 * with `messages` or `history` (and maybe `conversation_id`), or JSON lines.
 * @param {string} path
 * @returns {{conversationId: string, history: any[]}}
 */
export function readConversation(path) {
  const text = readFileSync(path, 'utf8');
  let history;
  let conversationId;
  if (path.endsWith('.jsonl')) {
    history = text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  } else {
    const v = JSON.parse(text);
    history = Array.isArray(v) ? v : v.messages ?? v.history;
    conversationId = Array.isArray(v) ? undefined : v.conversation_id ?? v.id;
  }
  if (!Array.isArray(history)) throw new Error(`${path}: no messages`);
  conversationId ??= history.find((m) => m.conversation_id)?.conversation_id ?? 'bundled';
  return { conversationId, history };
}

/**
 * The facts sidecar of a bundled conversation (name.facts.json), if any:
 * [{fact, query, must_contain, message_ids}].
 * @param {string} path the conversation file
 * @returns {{fact: string, query: string, must_contain: string[], message_ids: string[]}[]}
 */
export function readFacts(path) {
  const p = path.replace(/\.jsonl?$/, '.facts.json');
  if (p === path || !existsSync(p)) return [];
  const v = JSON.parse(readFileSync(p, 'utf8'));
  return Array.isArray(v) ? v : v.facts ?? [];
}
