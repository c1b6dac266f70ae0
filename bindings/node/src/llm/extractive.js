/**
 * The offline llm_complete: extractive summaries, no model, no network.
 * When the plug-in build exports its own extractive summarizer
 * (`extractiveSummary`), that is used, so the Node host summarizes exactly
 * like the Go host; otherwise a small deterministic JavaScript summarizer
 * answers.
 * @module
 */
import { contentText } from './wire.js';

/**
 * @typedef {import('../types.js').ModelRequest} ModelRequest
 * @typedef {import('../types.js').ModelResponse} ModelResponse
 * @typedef {{has(name: string): boolean, callJSON(name: string, input: unknown): Promise<any>}} PluginCaller
 */

/** Export names the plug-in may give its extractive summarizer. */
export const EXTRACTIVE_EXPORTS = Object.freeze(['extractiveSummary', 'extractive']);

const SIGNALS = ['decid', 'agreed', 'we will', "let's go with", 'error', 'fail', 'bug', 'fix', 'must', 'never',
  'always', 'deadline', 'budget', 'constraint', 'requirement', 'todo', 'blocked', 'because'];
const FILLER = /^(thanks|thank you|ok|okay|sounds good|great|cool|got it|sure|hi|hello|yes|no)[.!]*$/i;

/** @param {string} s */
const tokens = (s) => Math.ceil([...s].length / 4);

/**
 * A deterministic extractive summary of a summarization request: the
 * request's messages (not the system prompt, not the final directive) are
 * cut into sentences, scored (decisions, errors, constraints, questions,
 * identifiers; greetings dropped), and the best ones are printed in their
 * original order, one line per message, within max_tokens and at most about
 * half the input.
 * @param {ModelRequest} req
 * @returns {string}
 */
export function extractiveSummaryJS(req) {
  const msgs = Array.isArray(req?.messages) ? req.messages : [];
  // The last user message is the directive.
  let last = msgs.length - 1;
  while (last >= 0 && msgs[last]?.role !== 'user') last--;
  const body = msgs.filter((_, i) => i !== last);
  /** @type {{msg: number, pos: number, text: string, score: number, label: string}[]} */
  const sentences = [];
  let inputTokens = 0;
  body.forEach((m, mi) => {
    let text = contentText(m?.content);
    let label = m?.role === 'assistant' ? 'Assistant' : 'User';
    let prior = false;
    if (m?.role === 'system') {
      text = text.replace(/^(Previous summary of conversation:|Summary batch:)\n/, '');
      label = 'Summary';
      prior = true;
    } else if (text.startsWith('[Tool result]: ')) {
      text = text.slice('[Tool result]: '.length);
      label = 'Tool';
    } else if (text.startsWith('[Tool call]: ')) {
      text = text.slice('[Tool call]: '.length);
      label = 'Tool call';
    }
    inputTokens += tokens(text);
    const parts = text.split(/\n+|(?<=[.!?])\s+/u).map((s) => s.trim()).filter(Boolean);
    parts.forEach((s, pos) => {
      if (FILLER.test(s) || /^\[(Context Summary|Batch \d+|\.\.\.)/.test(s) || /^## /.test(s)) return;
      const lower = s.toLowerCase();
      let score = 1 + SIGNALS.filter((k) => lower.includes(k)).length;
      if (s.includes('?')) score += 1;
      if (/[\w-]+\/[\w./-]+|\d|[a-z][A-Z]|\w_\w|`/.test(s)) score += 1;
      if (prior) score += 2;
      score += (mi + 1) / (body.length + 1); // recency
      score -= pos * 0.25; // spread over messages
      sentences.push({ msg: mi, pos, text: s.length > 400 ? [...s].slice(0, 399).join('') + '…' : s, score, label });
    });
  });
  const budget = Math.max(1, Math.min(req?.max_tokens && req.max_tokens > 0 ? req.max_tokens : 1024,
    inputTokens > 200 ? Math.floor(inputTokens / 2) : inputTokens));
  const ranked = sentences.map((s, i) => ({ s, i })).sort((a, b) => b.s.score - a.s.score || a.i - b.i);
  const chosen = new Set();
  const seen = new Set();
  let used = 0;
  for (const { s, i } of ranked) {
    const key = s.text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    if (seen.has(key)) continue;
    const t = tokens(s.text) + 3;
    if (used + t > budget) continue;
    seen.add(key);
    chosen.add(i);
    used += t;
  }
  if (chosen.size === 0 && sentences.length > 0) chosen.add(0);
  /** @type {string[]} */
  const lines = [];
  let cur = -1;
  sentences.forEach((s, i) => {
    if (!chosen.has(i)) return;
    let text = s.text;
    if (tokens(text) > budget) text = [...text].slice(0, budget * 4 - 1).join('') + '…';
    if (s.msg !== cur) {
      lines.push(s.label === 'Summary' ? text : `${s.label}: ${text}`);
      cur = s.msg;
    } else {
      lines[lines.length - 1] += ` ${text}`;
    }
  });
  return lines.join('\n');
}

/**
 * Reads what the plug-in's extractive export returned.
 * @param {any} out
 * @returns {ModelResponse}
 */
function asResponse(out) {
  if (out && Array.isArray(out.content)) return out;
  const text = typeof out === 'string' ? out : typeof out?.content === 'string' ? out.content
    : typeof out?.summary === 'string' ? out.summary : typeof out?.text === 'string' ? out.text : '';
  return { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 0, output_tokens: 0 } };
}

/**
 * The offline default LLM.
 * @returns {{name: string, source: () => string, bindPlugin(p: PluginCaller): void, complete(req: ModelRequest): Promise<ModelResponse>}}
 */
export function offlineLLM() {
  /** @type {PluginCaller | null} */
  let plugin = null;
  const exportName = () => EXTRACTIVE_EXPORTS.find((n) => plugin?.has(n)) ?? null;
  return {
    name: 'extractive',
    /** Which summarizer answers: the plug-in's export or the JavaScript fallback. */
    source: () => exportName() ?? 'javascript',
    bindPlugin(p) { plugin = p; },
    async complete(req) {
      const name = exportName();
      if (name && plugin) return asResponse(await plugin.callJSON(name, req));
      const text = extractiveSummaryJS(req);
      return { content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 0, output_tokens: tokens(text) } };
    },
  };
}
