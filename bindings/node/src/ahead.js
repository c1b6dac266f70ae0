/**
 * Compaction ahead of time and the per-turn count, for the agent loop
 * (docs/spec.md#compaction-ahead-of-time): what compactor.compactAhead and
 * compactor.countContext run.
 *
 * Before each model call compactAhead counts the history as the model
 * will see it; over the soft threshold (`prepare_at` of the limit) it
 * starts a compaction of the history as it is on a plug-in instance of
 * its own (a worker: the plug-in is a pure function, what runs in the
 * background is the host's) — a dry run, whose commit a later call
 * applies in one store commit, the messages appended meanwhile after the
 * new clip-archive. A history that changed under it drops it. The caller
 * waits only when the history reaches the limit before the work is done,
 * and then only for the rest of it.
 *
 * The count is O(new messages): the plug-in's count of a history is the
 * sum of its messages' counts (the conservative estimator;
 * docs/spec.md#counting-tokens-and-the-window), so the count of a list
 * that continues the one counted last is that count plus the plug-in's
 * count of the new messages alone (estimateTokens), and with the
 * provider's usage it is the usage plus the count of the messages after
 * it. Nothing is estimated here: every count comes from the plug-in.
 * @module
 */
import { describe, invalidArgument, stringifyJSON } from './args.js';
import { ClipfoldError, HostError } from './errors.js';
import { ARCHIVE_IDS, COMMIT_JSON, COMMIT_PLANNED, WARM_WRITES } from './hostfns.js';

/**
 * @typedef {import('./types.js').Config} Config
 * @typedef {import('./types.js').ContextUsage} ContextUsage
 * @typedef {import('./types.js').CompactionResult} CompactionResult
 * @typedef {import('./types.js').ContextCount} ContextCount
 * @typedef {import('./types.js').AheadResult} AheadResult
 * @typedef {import('./types.js').Store} Store
 */

/**
 * A map of queues: run(key, fn) runs fn once the calls of key made before
 * it have finished; calls of other keys go on beside it.
 */
export function turnTaker() {
  /** @type {Map<string, Promise<void>>} */
  const last = new Map();
  /**
   * @template T
   * @param {string} key
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  return async function inTurn(key, fn) {
    const before = last.get(key);
    /** @type {() => void} */
    let done = () => {};
    const mine = new Promise((/** @type {(v: void) => void} */ resolve) => { done = resolve; });
    last.set(key, mine);
    try {
      if (before !== undefined) await before; // no turn to wait for: no tick either
      return await fn();
    } finally {
      done();
      if (last.get(key) === mine) last.delete(key);
    }
  };
}

/**
 * Whether two messages are the same: the same object, or the same JSON.
 * @param {unknown} a
 * @param {unknown} b
 */
function same(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A list's first and last message and its length: enough to tell that a
 * later list continues it (agent frameworks append to their lists; a list
 * that replaced its messages, a compaction, starts or ends elsewhere).
 * @typedef {{n: number, first: unknown, last: unknown}} Mark
 */

/** @param {readonly unknown[]} list @returns {Mark} */
const mark = (list) => ({ n: list.length, first: list[0], last: list[list.length - 1] });

/**
 * Whether `list` starts with the list `m` marks.
 * @param {readonly unknown[]} list
 * @param {Mark | null} m
 */
function continues(list, m) {
  if (m === null) return false;
  if (m.n === 0) return true;
  return list.length >= m.n && same(list[0], m.first) && same(list[m.n - 1], m.last);
}

/**
 * The exact JSON text of the value at `key` of the top-level object in
 * `text` (undefined when it has none): a dry run's `commit` goes to the
 * store as the plug-in wrote it, every message's JSON as it was.
 * @param {string} text
 * @param {string} key
 * @returns {string | undefined}
 */
export function topLevelValue(text, key) {
  const want = JSON.stringify(key);
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      i = stringEnd(text, i);
      if (depth !== 1 || i - start + 1 !== want.length || text.slice(start, i + 1) !== want) continue;
      let j = i + 1;
      while (/\s/.test(text[j] ?? '')) j++;
      if (text[j] !== ':') continue;
      j++;
      while (/\s/.test(text[j] ?? '')) j++;
      return text.slice(j, valueEnd(text, j));
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** The index of the closing quote of the string opening at i. @param {string} text @param {number} i */
function stringEnd(text, i) {
  for (let k = i + 1; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x5c) k++;
    else if (c === 0x22) return k;
  }
  return text.length;
}

/** The end (exclusive) of the JSON value starting at j. @param {string} text @param {number} j */
function valueEnd(text, j) {
  let depth = 0;
  for (let k = j; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x22) {
      k = stringEnd(text, k);
      if (depth === 0) return k + 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return k;
      if (--depth === 0) return k + 1;
    } else if (depth === 0 && c === 0x2c) return k;
  }
  return text.length;
}

/**
 * What ahead.js uses of the compactor (compactor.js makes it).
 * @typedef {object} AheadHost
 * @property {(name: string, input: string) => Promise<string>} pure an export on the instance of the pure exports
 *   (never delayed by a compaction under way)
 * @property {(conversationId: string, history: any[] | undefined, o: object) => Promise<{result: CompactionResult}>} compress
 *   compress, as compactor.compress runs it (the conversation's compactions take turns)
 * @property {(conversationId: string, history: any[] | undefined, o: object) => Promise<{input: string, restore: (r: CompactionResult) => void}>} dryRunInput
 *   a dry run's input, made in the conversation's turn; restore gives the result the caller's own objects back
 * @property {(input: string) => Promise<string>} background compress on an instance of the background work
 * @property {(commitText: string) => Promise<object | null>} [planAhead] the plan of a commit (the planCommit
 *   export's answer) made on an instance of the background work; null when the store cannot commit from one
 * @property {(conversationId: string, history: any[] | undefined, shape: any) => Promise<any[]>} stored
 *   a store-owned history: what `history` holds that the store holds nowhere appended, then the store's active history
 * @property {<T>(conversationId: string, fn: () => Promise<T>) => Promise<T>} inTurn the conversation's compactions' turn
 * @property {Store} store
 * @property {Config | undefined} config the compactor's config
 */

/** The most keys whose last count is kept; past it they are forgotten (the next call counts anew). */
const MAX_KEYS = 1024;
/** The most lengths a key's sums are kept at (what a provider's usage may cover). */
const MAX_SUMS = 16;

/**
 * @typedef {object} CountState
 * @property {string} stamp the config and shape counted under
 * @property {Mark} at the list counted last
 * @property {number} total the sum of its messages' counts
 * @property {Map<number, number>} sums the sums at the lengths it was counted at before
 */

/**
 * Counts lists of messages as shouldCompact does, each call paying only
 * for the messages new since the last call with the same key. Counts run
 * on the compactor's instance of the pure exports, which a compaction
 * under way (on a worker) never delays. Under `token_estimator: "chars4"`
 * (one ceiling over the whole history, not a sum) every call counts the
 * whole list.
 */
export class TokenCounter {
  /** @type {AheadHost} */
  #h;
  /** @type {Map<string, CountState>} */
  #counts = new Map();
  /** @type {Map<string, [number, number, number]>} */
  #limits = new Map();
  #turn = turnTaker();

  /** @param {AheadHost} h */
  constructor(h) {
    this.#h = h;
  }

  /**
   * (overhead_tokens, limit, prepare_limit) under a config (its JSON
   * text, "" for none): shouldCompact's answer for no messages.
   * @param {string} cfgText
   * @returns {Promise<[number, number, number]>}
   */
  async limits(cfgText) {
    let got = this.#limits.get(cfgText);
    if (got === undefined) {
      const out = JSON.parse(await this.#h.pure('shouldCompact', `{"messages":[]${cfgText ? `,"config":${cfgText}` : ''}}`));
      got = [out.tokens, out.limit, out.prepare_limit ?? out.limit];
      if (this.#limits.size >= 64) this.#limits.clear();
      this.#limits.set(cfgText, got);
    }
    return got;
  }

  /**
   * The plug-in's count of messages (estimateTokens; overhead not added).
   * @param {readonly unknown[]} messages
   * @param {number} from the index of the first message counted
   * @param {string} cfgText
   * @param {string | undefined} shape
   */
  async #estimate(messages, from, cfgText, shape) {
    if (from >= messages.length) return 0;
    const raws = [];
    for (let i = from; i < messages.length; i++) raws.push(messageText(messages[i], i));
    let payload = `{"messages":[${raws.join(',')}]`;
    if (cfgText) payload += `,"config":${cfgText}`;
    if (shape !== undefined) payload += `,"shape":${JSON.stringify(shape)}`;
    return JSON.parse(await this.#h.pure('estimateTokens', `${payload}}`)).tokens;
  }

  /**
   * shouldCompact's answer for `messages`, `config` laid over the
   * compactor's.
   * @param {string} key
   * @param {readonly unknown[]} messages
   * @param {ContextUsage | undefined} usage
   * @param {Config | undefined} config
   * @param {string | undefined} shape
   * @returns {Promise<ContextCount>}
   */
  async count(key, messages, usage, config, shape) {
    if (!Array.isArray(messages)) throw invalidArgument('messages', `must be an array of messages, got ${describe(messages)}`);
    const cfgText = configText(config);
    const [overhead, limit, prepare] = this.#limits.get(cfgText) ?? await this.limits(cfgText);
    if ((config?.token_estimator ?? this.#h.config?.token_estimator) === 'chars4') {
      let payload = `{"messages":[${messages.map(messageText).join(',')}]`;
      if (cfgText) payload += `,"config":${cfgText}`;
      if (usage !== undefined) payload += `,"usage":${JSON.stringify(usage)}`;
      if (shape !== undefined) payload += `,"shape":${JSON.stringify(shape)}`;
      return JSON.parse(await this.#h.pure('shouldCompact', `${payload}}`));
    }
    return this.#turn(key, async () => {
      let st = this.#counts.get(key);
      if (st === undefined) {
        if (this.#counts.size >= MAX_KEYS) this.#counts.clear();
        st = { stamp: '', at: { n: 0, first: undefined, last: undefined }, total: 0, sums: new Map([[0, 0]]) };
        this.#counts.set(key, st);
      }
      const stamp = `${cfgText}\0${shape ?? ''}`;
      const n = messages.length;
      if (st.stamp !== stamp || !continues(messages, st.at)) {
        st.stamp = stamp;
        st.at = { n: 0, first: undefined, last: undefined };
        st.total = 0;
        st.sums = new Map([[0, 0]]);
      }
      if (n > st.at.n) {
        st.total += await this.#estimate(messages, st.at.n, cfgText, shape);
        if (st.sums.size >= MAX_SUMS) for (const k of [...st.sums.keys()]) if (k < st.at.n) st.sums.delete(k);
        st.sums.set(n, st.total);
        st.at = mark(messages);
      }
      let tokens;
      if (usage !== undefined) {
        const k = usage.messages;
        if (k > n) throw invalidArgument('usage.messages', `must be at most the number of messages (${n}), got ${k}`);
        const before = st.sums.get(k);
        tokens = usage.input_tokens + (before !== undefined ? st.total - before : await this.#estimate(messages, k, cfgText, shape));
      } else {
        tokens = overhead + st.total;
      }
      return { due: tokens > limit, tokens, limit, prepare_limit: prepare };
    });
  }
}

/**
 * A config's JSON text ("" for none).
 * @param {Config | undefined} config
 */
function configText(config) {
  if (config === undefined || config === null) return '';
  return /** @type {string} */ (stringifyJSON(config, 'config'));
}

/**
 * A message's JSON text; a ClipfoldError naming it when it is not a message.
 * @param {unknown} m
 * @param {number} i
 */
function messageText(m, i) {
  const t = stringifyJSON(m, `messages[${i}]`);
  if (typeof t !== 'string' || !m || typeof m !== 'object' || Array.isArray(m)) {
    throw invalidArgument(`messages[${i}]`, `must be a message object, got ${describe(m)}`);
  }
  return t;
}

/**
 * A compaction prepared in the background: a dry run of `snapshot`.
 * @typedef {object} Job
 * @property {unknown[]} snapshot the view it compacts
 * @property {string[] | null} blocks caller-owned: the archive's block ids when it started
 * @property {boolean} done
 * @property {(CompactionResult & {commitText?: string}) | null} result
 * @property {unknown} error
 * @property {Promise<void>} settled resolves when it is done (never rejects)
 */

/**
 * One conversation's state: the compaction under way, and for a
 * caller-owned list the view the last call returned and the list it was
 * given.
 * @typedef {object} ConversationState
 * @property {Job | null} job
 * @property {boolean} idle the last prepared compaction had nothing to apply: none again before the limit
 * @property {unknown[] | null} view
 * @property {Mark | null} given
 * @property {number} lastTokens the last call's count
 * @property {number} growth the tokens the last call added
 * @property {number} jobGrowth the tokens added while the last prepared compaction ran
 */

/** What the history is expected to grow by while a compaction runs (docs/spec.md#compaction-ahead-of-time). @param {ConversationState} st */
const expectedGrowth = (st) => (st.jobGrowth > 0 ? st.jobGrowth : st.growth);

/**
 * Records the growth a call finds: tokens is its count of the history, a
 * prepared compaction applied (out), before anything else.
 * @param {ConversationState} st
 * @param {number} tokens
 * @param {AheadResult} out
 */
function observe(st, tokens, out) {
  if (out.compaction === null && st.lastTokens > 0 && tokens > st.lastTokens) st.growth = tokens - st.lastTokens;
  if (out.prepared && out.compaction !== null && !out.compaction.failed) {
    st.jobGrowth = Math.max(0, tokens - out.compaction.tokens_estimate_after);
  }
}

/** The most conversations whose state is kept; past it, the ones with no compaction under way are dropped. */
const MAX_STATES = 1024;

/**
 * @typedef {object} TurnOptions
 * @property {boolean} callerOwned
 * @property {string | undefined} shape
 * @property {Config | undefined} config
 * @property {ContextUsage | undefined} usage
 * @property {number} targetShare
 * @property {string | number | undefined} now
 */

/** compactAhead's state: per conversation, the compaction under way and the view last returned. */
export class Ahead {
  /** @type {AheadHost} */
  #h;
  /** @type {Map<string, ConversationState>} */
  #states = new Map();
  #turn = turnTaker();
  /** @type {Set<Promise<void>>} */
  #running = new Set();

  /** @param {AheadHost} h */
  constructor(h) {
    this.#h = h;
    this.counter = new TokenCounter(h);
  }

  /** @param {string} conversationId @returns {ConversationState} */
  #state(conversationId) {
    let st = this.#states.get(conversationId);
    if (st === undefined) {
      if (this.#states.size >= MAX_STATES) {
        for (const [k, s] of this.#states) if (s.job === null || s.job.done) this.#states.delete(k);
      }
      st = { job: null, idle: false, view: null, given: null, lastTokens: 0, growth: 0, jobGrowth: 0 };
      this.#states.set(conversationId, st);
    }
    return st;
  }

  /** Resolves when the compactions under way have finished (tests, shutdown). */
  async settled() {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  /**
   * The check before a model call (compactor.compactAhead).
   * @param {string} conversationId
   * @param {unknown[] | undefined} history
   * @param {TurnOptions} o
   * @returns {Promise<AheadResult>}
   */
  turn(conversationId, history, o) {
    return this.#turn(conversationId, async () => {
      const st = this.#state(conversationId);
      /** @type {AheadResult} */
      const out = {
        history: [], tokens: 0, limit: 0, prepare_limit: 0, compaction: null, prepared: false, waited_ms: 0, started: false, discarded: null,
      };
      const [, limit, prepare] = await this.counter.limits(configText(o.config));
      const targetNow = this.#target(o.config, o.targetShare, limit);
      let usage = o.usage;
      /** @type {unknown[]} */
      let view;
      if (o.callerOwned) {
        if (!Array.isArray(history)) {
          throw new ClipfoldError('invalid_input', 'history: a caller-owned compaction needs the caller\'s messages', { export: 'compress' });
        }
        const mapped = this.#viewOf(st, history);
        if (mapped === null) {
          view = await this.#establish(st, conversationId, history, o, targetNow, out);
          usage = undefined;
        } else view = mapped;
      } else {
        view = await this.#h.stored(conversationId, history ?? undefined, o.shape);
      }
      if (st.job?.done && await this.#apply(st, conversationId, view, o.callerOwned, out)) {
        view = out.history;
        usage = undefined;
      }
      let due = await this.#count(conversationId, view, usage, o);
      observe(st, due.tokens, out);
      if (due.due) {
        const start = performance.now();
        if (st.job !== null) {
          await st.job.settled; // the limit came first: the rest of the work under way
          if (await this.#apply(st, conversationId, view, o.callerOwned, out)) {
            view = out.history;
            usage = undefined;
            due = await this.#count(conversationId, view, undefined, o);
          }
        }
        if (due.due) {
          view = await this.#now(st, conversationId, view, o, usage, targetNow, out);
          due = await this.#count(conversationId, view, undefined, o);
        }
        out.waited_ms = performance.now() - start;
      } else if (due.tokens > Math.min(due.prepare_limit, due.limit - 2 * expectedGrowth(st)) && st.job === null && !st.idle) {
        // Never below half the target at the limit: lower, the newest
        // messages and the clip-archive may not fit a small window.
        const target = targetNow > 0 ? Math.max(Math.ceil(targetNow / 2), targetNow - (limit - prepare) - expectedGrowth(st)) : 0;
        st.job = await this.#start(conversationId, view, o, target);
        out.started = true;
      }
      if (due.tokens <= due.prepare_limit) st.idle = false;
      st.lastTokens = due.tokens;
      out.history = view;
      out.tokens = due.tokens;
      out.limit = due.limit;
      out.prepare_limit = due.prepare_limit;
      if (o.callerOwned) {
        st.given = mark(/** @type {unknown[]} */ (history));
        st.view = view.slice();
      }
      return out;
    });
  }

  /**
   * The target_tokens of a compaction at the limit: the config's own,
   * else share × limit; 0 for none (compact to keep_recent).
   * @param {Config | undefined} config
   * @param {number} share
   * @param {number} limit
   */
  #target(config, share, limit) {
    const own = config?.target_tokens ?? this.#h.config?.target_tokens;
    if (own !== undefined && own !== null) return Number(own);
    if (share <= 0 || limit <= 0) return 0;
    return Math.max(1, Math.floor(share * limit));
  }

  /**
   * A caller-owned list mapped onto the view the last call returned: that
   * view and what follows it, or that view and what follows the list the
   * last call was given (a list resent whole). null: neither.
   * @param {ConversationState} st
   * @param {unknown[]} history
   */
  #viewOf(st, history) {
    if (st.view === null) return null;
    if (continues(history, mark(st.view))) return history;
    if (continues(history, st.given)) return st.view.concat(history.slice(/** @type {Mark} */ (st.given).n));
    return null;
  }

  /**
   * The view of a caller-owned list this state knows nothing of: compress
   * computes it, compacting now if it is due.
   * @param {ConversationState} st
   * @param {string} conversationId
   * @param {unknown[]} history
   * @param {TurnOptions} o
   * @param {number} target
   * @param {AheadResult} out
   */
  async #establish(st, conversationId, history, o, target, out) {
    const start = performance.now();
    let waited = st.job !== null;
    if (st.job !== null) {
      await st.job.settled; // prepared on a list this one does not continue
      st.job = null;
      out.discarded = 'the history changed under it';
    }
    const { result } = await this.#h.compress(conversationId, history, {
      callerOwned: true, onlyIfDue: true, shape: o.shape, config: withTarget(o.config, target), now: o.now,
    });
    if (result.messages_compressed > 0) {
      out.compaction = result;
      waited = true;
      st.idle = false;
    }
    if (waited) out.waited_ms = performance.now() - start;
    return result.history;
  }

  /**
   * @param {string} conversationId
   * @param {unknown[]} view
   * @param {ContextUsage | undefined} usage
   * @param {TurnOptions} o
   */
  #count(conversationId, view, usage, o) {
    if (usage !== undefined && usage.messages > view.length) usage = undefined; // counted a list this one no longer holds
    return this.counter.count(`\0ahead\0${o.callerOwned ? 'caller' : 'store'}\0${conversationId}`, view, usage, o.config, o.shape);
  }

  /**
   * Compacts at the limit (nothing prepared, or it was dropped).
   * @param {ConversationState} st
   * @param {string} conversationId
   * @param {unknown[]} view
   * @param {TurnOptions} o
   * @param {ContextUsage | undefined} usage
   * @param {number} target
   * @param {AheadResult} out
   */
  async #now(st, conversationId, view, o, usage, target, out) {
    const { result } = await this.#h.compress(conversationId, o.callerOwned ? view : undefined, {
      callerOwned: o.callerOwned, onlyIfDue: true, shape: o.shape, config: withTarget(o.config, target), usage, now: o.now,
    });
    out.compaction = result;
    out.prepared = false;
    if (!result.failed && result.messages_compressed > 0) {
      st.idle = false;
      return o.callerOwned ? result.history : this.#h.stored(conversationId, undefined, o.shape);
    }
    if (o.callerOwned && result.history.length > 0) return result.history; // a failed caller-owned compaction answers the view
    return view;
  }

  /**
   * Starts the dry run of `view` on an instance of the background work;
   * its input is made now (for a store-owned history, the active history
   * as stored now), so it compacts the very history this call counted.
   * @param {string} conversationId
   * @param {unknown[]} view
   * @param {TurnOptions} o
   * @param {number} target
   * @returns {Promise<Job>}
   */
  async #start(conversationId, view, o, target) {
    const snapshot = view.slice();
    const blocks = o.callerOwned ? await this.#archiveIds(conversationId) : null;
    const { input, restore } = await this.#h.dryRunInput(conversationId, o.callerOwned ? snapshot : undefined, {
      callerOwned: o.callerOwned, shape: o.shape, config: withTarget(o.config, target), dryRun: true, now: o.now,
    });
    /** @type {Job} */
    const job = { snapshot, blocks, done: false, result: null, error: null, settled: Promise.resolve() };
    job.settled = this.#h.background(input).then(async (text) => {
      /** @type {CompactionResult & {commitText?: string, plan?: object | null}} */
      const r = JSON.parse(text);
      const commitText = r.commit !== undefined ? topLevelValue(text, 'commit') : undefined;
      // Planned here, in the background, the commit leaves the turn that
      // applies it the store's SQL only.
      const plan = commitText !== undefined && !r.failed && this.#h.planAhead ? await this.#h.planAhead(commitText) : null;
      Object.defineProperty(r, 'commitText', { value: commitText, enumerable: false, configurable: true });
      Object.defineProperty(r, 'plan', { value: plan, enumerable: false, configurable: true });
      restore(r);
      job.result = r;
    }, (err) => { job.error = err; }).finally(() => {
      job.done = true;
      this.#running.delete(job.settled);
    });
    this.#running.add(job.settled);
    // After this call returns, while the agent waits for its model: the
    // commit this job ends with then finds the store's code compiled.
    const s = /** @type {any} */ (this.#h.store);
    if (typeof s?.[WARM_WRITES] === 'function') setImmediate(() => s[WARM_WRITES]());
    return job;
  }

  /**
   * The ids of the conversation's archived blocks: batches and
   * replacement records.
   * @param {string} conversationId
   */
  async #archiveIds(conversationId) {
    /** @type {string[]} */
    const ids = [];
    const s = /** @type {any} */ (this.#h.store);
    for (const prefix of [`compaction-batch-${conversationId}-`, `compaction-replaced-${conversationId}-`]) {
      if (typeof s[ARCHIVE_IDS] === 'function') {
        ids.push(...s[ARCHIVE_IDS]('archival', prefix));
        continue;
      }
      const got = await s.list({ tier: 'archival', label_prefix: prefix });
      if (got && typeof got === 'object' && 'error' in got) throw new HostError(got.error.code, `memory_list: ${got.error.message}`);
      for (const b of got.blocks) ids.push(String(b.id));
    }
    return ids;
  }

  /**
   * Applies the finished compaction to `view` (out.history then holds the
   * new view), or drops it (out.discarded says why). Reports whether it
   * was applied.
   * @param {ConversationState} st
   * @param {string} conversationId
   * @param {unknown[]} view
   * @param {boolean} callerOwned
   * @param {AheadResult} out
   */
  async #apply(st, conversationId, view, callerOwned, out) {
    const job = /** @type {Job} */ (st.job);
    st.job = null;
    let why = stale(job, view, callerOwned);
    if (why === null && callerOwned) {
      const ids = await this.#archiveIds(conversationId);
      const was = /** @type {string[]} */ (job.blocks);
      if (ids.length !== was.length || ids.some((id, i) => id !== was[i])) why = 'another compaction committed first';
    }
    const r = job.result;
    if (why === null && r !== null) why = await this.#commit(conversationId, r);
    if (why !== null || r === null) {
      out.discarded = why;
      if (job.error !== null || r === null || r.failed || r.commit === undefined) st.idle = true; // nothing to apply: no new attempt before the limit
      return false;
    }
    r.history = callerOwned ? r.history.concat(view.slice(job.snapshot.length)) : await this.#h.stored(conversationId, undefined, undefined);
    out.history = r.history;
    out.compaction = r;
    out.prepared = true;
    st.idle = false;
    return true;
  }

  /**
   * Sends a dry run's commit to the store, as the plug-in's
   * compaction_commit would have (all or nothing; a store-owned history
   * that lost a message it removes or replaces answers conflict), in the
   * conversation's turn: from the plan made in the background when the
   * store commits from one (the times it writes are those of the plan).
   * Returns why it failed, or null.
   * @param {string} conversationId
   * @param {CompactionResult & {commitText?: string, plan?: object | null}} r
   * @returns {Promise<string | null>}
   */
  #commit(conversationId, r) {
    const text = r.commitText ?? JSON.stringify(r.commit);
    return this.#h.inTurn(conversationId, async () => {
      const s = /** @type {any} */ (this.#h.store);
      /** @type {any} */
      let answer;
      try {
        if (r.plan && typeof s[COMMIT_PLANNED] === 'function') answer = await s[COMMIT_PLANNED](r.plan);
        else answer = typeof s[COMMIT_JSON] === 'function' ? await s[COMMIT_JSON](text) : await s.commit(JSON.parse(text));
      } catch (err) {
        answer = { error: err instanceof HostError ? err.toJSON().error : { code: /** @type {any} */ (err)?.code, message: String(/** @type {any} */ (err)?.message ?? err) } };
      }
      const e = answer && typeof answer === 'object' ? answer.error : undefined;
      if (e && typeof e === 'object') {
        return e.code === 'conflict' ? `the history changed under it (${e.message})` : `the commit failed: ${e.message}`;
      }
      return null;
    });
  }
}

/**
 * Why the finished job cannot be applied to view, or null.
 * @param {Job} job
 * @param {unknown[]} view
 * @param {boolean} callerOwned
 * @returns {string | null}
 */
function stale(job, view, callerOwned) {
  const r = job.result;
  if (job.error !== null) return `it failed: ${job.error instanceof Error ? job.error.message : String(job.error)}`;
  if (r === null) return 'it failed';
  if (r.failed) return `it failed (${r.failure_code}): ${r.failure_message}`;
  if (r.commit === undefined) return 'it had nothing to compact';
  if (callerOwned) {
    const snap = job.snapshot;
    if (view.length < snap.length) return 'the history changed under it';
    for (let i = 0; i < snap.length; i++) if (!same(view[i], snap[i])) return 'the history changed under it';
  }
  return null;
}

/**
 * @param {Config | undefined} config
 * @param {number} target
 * @returns {Config | undefined}
 */
function withTarget(config, target) {
  return target > 0 ? { ...config, target_tokens: target } : config;
}
