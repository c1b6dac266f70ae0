// The wire helpers (src/wire.js): a compacted history, as compress
// returned it, put back on each provider's wire.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCompactor, wire } from '../src/index.js';
import { wasmPath } from './helpers/common.js';
import { makeConversation } from './helpers/conversation.js';

const CONFIG = { keep_recent: 3, chunk_size: 8, max_summary_tokens: 80 };

/** @param {number} i */
function anthropicTurn(i) {
  return [
    { role: 'user', content: `Question ${i}: what did we decide about module ${i} and its retry budget?` },
    { role: 'assistant', content: [{ type: 'tool_use', id: `tu_${i}`, name: 'search_notes', input: { module: i } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu_${i}`, content: `notes: module ${i} keeps a retry budget of ${10 + i}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `We agreed module ${i} keeps a retry budget of ${10 + i}; recorded in the notes.` }] },
  ];
}

describe('wire helpers', () => {
  /** @type {Awaited<ReturnType<typeof createCompactor>>} */
  let c;
  before(async () => { c = await createCompactor({ wasmPath: wasmPath(), config: CONFIG }); });
  after(async () => { await c?.close(); });

  test('openaiChat: a native history loses id, conversation_id, created_at, pinned; the clip-archive stays where compress put it', async () => {
    const h = makeConversation('w1', 30);
    /** @type {any} */ (h[4]).pinned = true;
    const r = await c.compress('w1', h, { callerOwned: true });
    assert.ok(!r.failed && r.messages_compressed > 0, String(r.failure_message));
    assert.ok('id' in r.history[0] && 'created_at' in r.history[0], 'a native history gets a native clip-archive');
    const msgs = wire.openaiChat(r, { system: 'You are terse.' });
    assert.deepEqual(msgs[0], { role: 'system', content: 'You are terse.' });
    // The kept messages start with the pinned system prompt and a pinned
    // tool call: the clip-archive is the user turn before them.
    assert.deepEqual(msgs[1], { role: 'user', content: r.clip_archive });
    assert.deepEqual(msgs.slice(2, 4).map((m) => m.role), ['system', 'assistant']);
    for (const m of msgs) for (const k of wire.BOOKKEEPING) assert.ok(!(k in m), `${k} left in ${JSON.stringify(m)}`);
    assert.equal(msgs.length, r.history.length + 1);
    assert.ok('id' in r.history[1], 'the result itself is not changed');
  });

  test('anthropic: the clip-archive turn goes into system; no system role is left; tool pairs stay', async () => {
    const h = Array.from({ length: 20 }, (_, i) => anthropicTurn(i)).flat();
    const r = await c.compress('w2', h, { callerOwned: true, config: { keep_recent: 4 } });
    assert.ok(!r.failed && r.messages_compressed > 0, String(r.failure_message));
    assert.deepEqual(r.history[0], { role: 'user', content: r.clip_archive });
    const out = wire.anthropic(r, { system: 'You are terse.' });
    assert.equal(out.system, `You are terse.\n\n${r.clip_archive}`);
    assert.equal(out.messages[0].role, 'user');
    assert.deepEqual(out.messages, r.history.slice(1));
    const uses = new Set(out.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use').map((b) => b.id));
    for (const m of out.messages) {
      for (const b of Array.isArray(m.content) ? m.content : []) if (b.type === 'tool_result') assert.ok(uses.has(b.tool_use_id));
    }
  });

  test('anthropic: when the kept messages start with an assistant turn, the clip-archive stays the first user turn', () => {
    const archive = '[Context Summary — 4 messages compressed across 1 compaction cycle(s)]\n\nx';
    const out = wire.anthropic({ clip_archive: archive, history: [{ role: 'user', content: archive }, { role: 'assistant', content: 'ok' }] });
    assert.deepEqual(out, { messages: [{ role: 'user', content: archive }, { role: 'assistant', content: 'ok' }] });
    // A Chat-shaped history: its system messages are lifted, the ids go.
    const chat = wire.anthropic({ clip_archive: archive, history: [{ id: 'clip', role: 'system', content: archive },
      { id: 'a', role: 'system', content: 'Pinned rule.' }, { id: 'b', role: 'user', content: 'hi', created_at: '2026-01-01T00:00:00Z' }] });
    assert.deepEqual(chat, { system: `${archive}\n\nPinned rule.`, messages: [{ role: 'user', content: 'hi' }] });
  });

  test('responses: items keep their own ids; the clip-archive moves to instructions when asked', async () => {
    const h = [];
    for (let i = 0; i < 20; i++) {
      h.push({ type: 'message', role: 'user', content: `Question ${i} about module ${i}?` },
        { type: 'function_call', id: `fc_item_${i}`, call_id: `call_${i}`, name: 'search_notes', arguments: JSON.stringify({ module: i }) },
        { type: 'function_call_output', call_id: `call_${i}`, output: `module ${i} keeps a retry budget of ${10 + i}` },
        { type: 'message', role: 'assistant', content: `Module ${i} keeps ${10 + i}.` });
    }
    const r = await c.compress('w3', h, { callerOwned: true, config: { keep_recent: 4 } });
    assert.ok(!r.failed && r.messages_compressed > 0, String(r.failure_message));
    assert.deepEqual(wire.responses(r).input, r.history);
    const out = wire.responses(r, { instructions: 'Be brief.', archiveInInstructions: true });
    assert.equal(out.instructions, `Be brief.\n\n${r.clip_archive}`);
    assert.deepEqual(out.input, r.history.slice(1));
    assert.ok(out.input.some((m) => m.id?.startsWith('fc_item_')), 'an item\'s own id is the API\'s');
  });

  test('a bare history is accepted; anything else is a TypeError', () => {
    assert.deepEqual(wire.openaiChat([{ id: 'x', role: 'user', content: 'a' }]), [{ role: 'user', content: 'a' }]);
    assert.throws(() => wire.anthropic(/** @type {any} */ ({ messages: [] })), TypeError);
  });
});
