"""Compaction ahead of time and the per-turn check, for the agent loop
(docs/spec.md#compaction-ahead-of-time).

:class:`Ahead` is what :meth:`Compactor.compact_ahead` runs: before each
model call it counts the history as the model will see it; over the soft
threshold (``prepare_at`` of the limit) it starts a compaction of the
history as it is in a thread of its own — a dry run, whose ``commit`` a
later call applies in one store commit, the messages appended meanwhile
after the new clip-archive. A history that changed under it drops it. The
caller waits only when the history reaches the limit before the work is
done, and then only for the rest of it.

:class:`TokenCounter` makes the per-turn count O(new messages): the
plug-in's count of a history is the sum of its messages' counts (the
conservative estimator; docs/spec.md#counting-tokens-and-the-window), so
the count of a list that continues the one counted last is that count
plus the plug-in's count of the new messages alone (estimateTokens), and
with the provider's usage it is the usage plus the count of the messages
after it. Nothing is estimated here: every count comes from the plug-in.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, cast

from ._host import worker as _worker
from ._messages import Prepared
from .types import AheadResult, CompactionResult, Config, ContextUsage, ShouldCompactResult

if TYPE_CHECKING:
    from .compactor import Compactor

__all__ = ["Ahead", "TokenCounter"]


def _dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def same(a: Any, b: Any) -> bool:
    """Whether two messages are the same: the same object, or equal."""
    return a is b or (type(a) is type(b) and a == b)


def continues(messages: Sequence[Any], prefix: Optional[Sequence[Any]]) -> bool:
    """Whether ``messages`` starts with ``prefix``: at least as long, the
    same first and last message of it. Agent frameworks append to their
    lists; a list that replaced its messages (a compaction) starts or ends
    elsewhere."""
    if prefix is None:
        return False
    n = len(prefix)
    if n == 0:
        return True
    return len(messages) >= n and same(messages[0], prefix[0]) and same(messages[n - 1], prefix[n - 1])


class _Count:
    """A list's count as last made: its first and last message and length,
    the sum of its messages' counts, and the sums at the lengths it was
    counted at before (the messages a provider's usage covers)."""

    __slots__ = ("key", "first", "last", "n", "total", "sums")

    def __init__(self) -> None:
        self.key = ""
        self.first: Any = None
        self.last: Any = None
        self.n = 0
        self.total = 0
        self.sums: Dict[int, int] = {}


class TokenCounter:
    """Counts lists of messages as ``shouldCompact`` does, each call
    paying only for the messages that are new since the last call with the
    same ``key``: see the module's docstring. Counts run on the Compactor's
    second plug-in instance, so a compaction under way on the first never
    delays them. Under ``token_estimator: "chars4"`` (one ceiling over the
    whole history, not a sum) every call counts the whole list."""

    _MAX_KEYS = 1024
    _MAX_SUMS = 16

    def __init__(self, compactor: "Compactor") -> None:
        self._c = compactor
        self._lock = threading.Lock()
        self._counts: Dict[str, _Count] = {}
        self._limits: Dict[str, Tuple[int, int, int]] = {}
        self._last_cfg: Optional[Tuple[Dict[str, Any], str]] = None

    def _call(self, export: str, payload: str) -> Dict[str, Any]:
        return cast(Dict[str, Any], json.loads(self._c._aux(export, payload.encode("utf-8"))))

    def _text(self, cfg: Optional[Config]) -> str:
        """The config's JSON text ("" for none), remembered for the config
        last seen: an agent sends the same one turn after turn."""
        if not cfg:
            return ""
        last = self._last_cfg
        if last is not None and last[0] == cfg:
            return last[1]
        text = _dumps(cfg)
        self._last_cfg = (dict(cfg), text)
        return text

    def limits(self, cfg_text: str) -> Tuple[int, int, int]:
        """(overhead_tokens, limit, prepare_limit) under a config (JSON
        text, "" for none): shouldCompact's answer for no messages."""
        got = self._limits.get(cfg_text)
        if got is None:
            out = self._call("shouldCompact", '{"messages":[]' + (',"config":' + cfg_text if cfg_text else "") + "}")
            got = (int(out["tokens"]), int(out["limit"]), int(out.get("prepare_limit", out["limit"])))
            if len(self._limits) >= 64:
                self._limits.clear()
            self._limits[cfg_text] = got
        return got

    def _estimate(self, raws: Sequence[str], cfg_text: str, shape: Optional[str]) -> int:
        if not raws:
            return 0
        payload = '{"messages":[' + ",".join(raws) + "]"
        if cfg_text:
            payload += ',"config":' + cfg_text
        if shape is not None:
            payload += ',"shape":' + _dumps(shape)
        return int(self._call("estimateTokens", payload + "}")["tokens"])

    def count(self, key: str, messages: Sequence[Any], usage: Optional[ContextUsage] = None,
              config: Optional[Config] = None, shape: Optional[str] = None) -> ShouldCompactResult:
        """``{"due", "tokens", "limit", "prepare_limit"}`` for ``messages``
        (any shape, LangChain objects too), as :meth:`Compactor.should_compact`
        answers, ``config`` laid over the Compactor's."""
        cfg = self._c._config(config)
        cfg_text = self._text(cfg)
        overhead, limit, prepare = self.limits(cfg_text)
        if self._chars4(cfg):
            payload = '{"messages":' + Prepared(messages).array() + (',"config":' + cfg_text if cfg_text else "")
            if usage is not None:
                payload += ',"usage":' + _dumps(usage)
            if shape is not None:
                payload += ',"shape":' + _dumps(shape)
            return cast(ShouldCompactResult, self._call("shouldCompact", payload + "}"))
        with self._lock:
            st = self._counts.get(key)
            if st is None:
                if len(self._counts) >= self._MAX_KEYS:
                    self._counts.clear()
                st = self._counts[key] = _Count()
            return self._count(st, messages, usage, cfg_text, shape, overhead, limit, prepare)

    def _count(self, st: _Count, messages: Sequence[Any], usage: Optional[ContextUsage], cfg_text: str,
               shape: Optional[str], overhead: int, limit: int, prepare: int) -> ShouldCompactResult:
        n = len(messages)
        if st.key != cfg_text + "\x00" + (shape or "") or not (st.n <= n and (st.n == 0 or (
                same(messages[0], st.first) and same(messages[st.n - 1], st.last)))):
            st.key, st.n, st.total, st.sums = cfg_text + "\x00" + (shape or ""), 0, 0, {0: 0}
        if n > st.n:
            st.total += self._estimate(Prepared(messages[st.n:]).raws, cfg_text, shape)
            if len(st.sums) >= self._MAX_SUMS:
                st.sums = {k: v for k, v in st.sums.items() if k >= st.n}
            st.sums[n] = st.total
            st.n, st.first, st.last = n, messages[0], messages[-1]
        if usage is not None:
            k = int(usage["messages"])
            if k > n:
                from . import _check
                raise _check.invalid("usage.messages", "must be at most the number of messages (%d), got %d" % (n, k))
            before = st.sums.get(k)
            rest = st.total - before if before is not None else self._estimate(Prepared(messages[k:]).raws, cfg_text, shape)
            tokens = int(usage["input_tokens"]) + rest
        else:
            tokens = overhead + st.total
        return {"due": tokens > limit, "tokens": tokens, "limit": limit, "prepare_limit": prepare}

    def forget(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)

    def _chars4(self, cfg: Optional[Config]) -> bool:
        est = (cfg or {}).get("token_estimator", (self._c._manifest_config or {}).get("token_estimator"))
        return est == "chars4"


class _Job:
    """A compaction prepared in a thread: a dry run of ``snapshot``."""

    def __init__(self, snapshot: List[Any], blocks: Optional[List[str]]) -> None:
        self.snapshot = snapshot
        self.blocks = blocks  # caller-owned: the archive's block ids when it started
        self.done = threading.Event()
        self.result: Optional[CompactionResult] = None
        self.error: Optional[BaseException] = None


class _State:
    """One conversation's state: the compaction under way, and for a
    caller-owned list the view the last call returned and the list it was
    given."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.job: Optional[_Job] = None
        self.idle = False  # the last prepared compaction had nothing to apply: none again before the limit
        self.view: Optional[List[Any]] = None
        self.given: Optional[List[Any]] = None
        # How fast the history grows: tokens added by the last call, and
        # while the last prepared compaction ran (docs/spec.md#compaction-ahead-of-time).
        self.last_tokens = 0
        self.growth = 0
        self.job_growth = 0

    def expected_growth(self) -> int:
        """What the history is expected to grow by while a compaction runs."""
        return self.job_growth if self.job_growth > 0 else self.growth

    def observe(self, tokens: int, compaction: Optional[CompactionResult], prepared: bool) -> None:
        """Records the growth a call finds: ``tokens`` is its count of the
        history, a prepared compaction applied, before anything else."""
        if compaction is None and 0 < self.last_tokens < tokens:
            self.growth = tokens - self.last_tokens
        if prepared and compaction is not None and not compaction["failed"]:
            self.job_growth = max(0, tokens - int(compaction["tokens_estimate_after"]))


class Ahead:
    """The state of :meth:`Compactor.compact_ahead`: per conversation, the
    compaction under way and the view last returned."""

    _MAX_STATES = 1024

    def __init__(self, compactor: "Compactor") -> None:
        self._c = compactor
        self.counter = TokenCounter(compactor)
        self._mu = threading.Lock()
        self._states: Dict[str, _State] = {}

    def _state(self, conversation_id: str) -> _State:
        with self._mu:
            st = self._states.get(conversation_id)
            if st is None:
                if len(self._states) >= self._MAX_STATES:
                    for k in [k for k, s in self._states.items() if s.job is None and not s.lock.locked()]:
                        del self._states[k]
                st = self._states[conversation_id] = _State()
            return st

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits for the compactions under way (tests, shutdown)."""
        with self._mu:
            jobs = [s.job for s in self._states.values() if s.job is not None]
        for j in jobs:
            j.done.wait(timeout)

    # ------------------------------------------------------------ the turn
    def turn(self, conversation_id: str, history: Optional[Sequence[Any]], caller_owned: bool,
             shape: Optional[str], config: Optional[Config], usage: Optional[ContextUsage], target_share: float,
             now: Any) -> AheadResult:
        c = self._c
        st = self._state(conversation_id)
        with st.lock:
            out: AheadResult = {"history": [], "tokens": 0, "limit": 0, "prepare_limit": 0, "compaction": None,
                                "prepared": False, "waited_ms": 0.0, "started": False, "discarded": None}
            cfg = c._config(config)
            cfg_text = _dumps(cfg) if cfg else ""
            _, limit, prepare = self.counter.limits(cfg_text)
            target_now = self._target(cfg, target_share, limit)
            view: Optional[List[Any]]
            if caller_owned:
                if history is None:
                    from .errors import ClipfoldError
                    raise ClipfoldError("invalid_input", "history: a caller-owned compaction needs the caller's messages",
                                        "history")
                view = self._view_of(st, list(history))
                if view is None:
                    view = self._establish(st, conversation_id, list(history), shape, config, target_now, now, out)
                    usage = None
            else:
                view = self._stored(conversation_id, history, shape)
            if st.job is not None and st.job.done.is_set():
                if self._apply(st, conversation_id, view, caller_owned, out):
                    view, usage = out["history"], None
            due = self._count(conversation_id, view, usage, config, shape, caller_owned)
            st.observe(due["tokens"], out["compaction"], out["prepared"])
            if due["due"]:
                start = time.monotonic()
                if st.job is not None:
                    st.job.done.wait()  # the limit came first: the rest of the work under way
                    if self._apply(st, conversation_id, view, caller_owned, out):
                        view, usage = out["history"], None
                        due = self._count(conversation_id, view, None, config, shape, caller_owned)
                if due["due"]:
                    view = self._now(st, conversation_id, view, caller_owned, shape, config, usage, target_now, now, out)
                    due = self._count(conversation_id, view, None, config, shape, caller_owned)
                out["waited_ms"] = (time.monotonic() - start) * 1000.0
            elif (due["tokens"] > min(due.get("prepare_limit", due["limit"]), due["limit"] - 2 * st.expected_growth())
                  and st.job is None and not st.idle):
                # Never below half the target at the limit: lower, the newest
                # messages and the clip-archive may not fit a small window.
                target = (max((target_now + 1) // 2, target_now - (limit - prepare) - st.expected_growth())
                          if target_now > 0 else 0)
                st.job = self._start(conversation_id, view, caller_owned, shape, config, target, now)
                out["started"] = True
            if due["tokens"] <= due.get("prepare_limit", due["limit"]):
                st.idle = False
            st.last_tokens = due["tokens"]
            out["history"], out["tokens"], out["limit"] = view, due["tokens"], due["limit"]
            out["prepare_limit"] = due.get("prepare_limit", due["limit"])
            if caller_owned:
                st.given, st.view = list(history or []), view
            return out

    def _target(self, cfg: Optional[Config], share: float, limit: int) -> int:
        """The target_tokens of a compaction at the limit: the config's own,
        else share × limit; 0 for none (compact to keep_recent)."""
        own = (cfg or {}).get("target_tokens")
        if own is not None:
            return int(own)
        if share <= 0 or limit <= 0:
            return 0
        return max(1, int(share * limit))

    @staticmethod
    def _with_target(config: Optional[Config], target: int) -> Optional[Config]:
        if target <= 0:
            return config
        return {**(config or {}), "target_tokens": target}

    def _view_of(self, st: _State, history: List[Any]) -> Optional[List[Any]]:
        """A caller-owned list mapped onto the view the last call returned:
        that view and what follows it, or that view and what follows the
        list the last call was given (a list resent whole). None: neither."""
        if st.view is None:
            return None
        if continues(history, st.view):
            return history
        if st.given is not None and continues(history, st.given):
            return st.view + history[len(st.given):]
        return None

    def _establish(self, st: _State, conversation_id: str, history: List[Any], shape: Optional[str],
                   config: Optional[Config], target: int, now: Any, out: AheadResult) -> List[Any]:
        """The view of a caller-owned list this state knows nothing of:
        compress computes it, compacting now if it is due."""
        start = time.monotonic()
        waited = st.job is not None
        if st.job is not None:  # its instance is the one compress runs on
            st.job.done.wait()
            st.job, out["discarded"] = None, "the history changed under it"
        r = self._c.compress(conversation_id, history, caller_owned=True, only_if_due=True, shape=shape,
                             config=self._with_target(config, target), now=now)
        if r["messages_compressed"] > 0:
            out["compaction"], waited = r, True
            st.idle = False
        if waited:
            out["waited_ms"] = (time.monotonic() - start) * 1000.0
        return list(r["history"])

    def _stored(self, conversation_id: str, history: Optional[Sequence[Any]], shape: Optional[str]) -> List[Any]:
        """A store-owned history: the messages of ``history`` the store holds
        nowhere appended, then the store's active history."""
        c = self._c
        with c._conversations.hold(conversation_id):
            if history is not None:
                prepared = Prepared(history, "history")
                appended = c._sync(conversation_id, prepared, shape)
                c._index_active(conversation_id, c.store.active_rows(conversation_id), appended, shape)
            return c.store.active_messages(conversation_id)

    def _count(self, conversation_id: str, view: List[Any], usage: Optional[ContextUsage], config: Optional[Config],
               shape: Optional[str], caller_owned: bool) -> ShouldCompactResult:
        if usage is not None and int(usage["messages"]) > len(view):
            usage = None  # counted a list this one no longer holds
        key = ("caller\x00" if caller_owned else "store\x00") + conversation_id
        return self.counter.count(key, view, usage, config, shape)

    def _now(self, st: _State, conversation_id: str, view: List[Any], caller_owned: bool, shape: Optional[str],
             config: Optional[Config], usage: Optional[ContextUsage], target: int, now: Any,
             out: AheadResult) -> List[Any]:
        """Compacts at the limit (nothing prepared, or it was dropped)."""
        r = self._c.compress(conversation_id, view if caller_owned else None, caller_owned=caller_owned, only_if_due=True,
                             shape=shape, config=self._with_target(config, target), usage=usage, now=now)
        out["compaction"], out["prepared"] = r, False
        if not r["failed"] and r["messages_compressed"] > 0:
            st.idle = False
            return list(r["history"]) if caller_owned else self._c.store.active_messages(conversation_id)
        if caller_owned and r["history"]:
            return list(r["history"])  # a failed caller-owned compaction answers the view
        return view

    def _start(self, conversation_id: str, view: List[Any], caller_owned: bool, shape: Optional[str],
               config: Optional[Config], target: int, now: Any) -> _Job:
        """Starts the dry run of ``view`` in a thread of its own; its input
        is made now (for a store-owned history, the active history as
        stored now)."""
        c = self._c
        snapshot = list(view)
        blocks = self._archive_ids(conversation_id) if caller_owned else None
        job = _Job(snapshot, blocks)
        with c._conversations.hold(conversation_id):
            prepared, payload, _ = c._compress_payload(conversation_id, snapshot if caller_owned else None, caller_owned,
                                                       False, shape, self._with_target(config, target), True, now, None,
                                                       None)
        loop = getattr(_worker, "loop", None)  # an AsyncCompactor's event loop: async LLMs run on it

        def run() -> None:
            _worker.loop = loop
            try:
                r = cast(CompactionResult, json.loads(c.call("compress", payload)))
                if prepared is not None:
                    r["history"] = prepared.restore(r["history"], c._ids_of(conversation_id, shape))
                job.result = r
            except BaseException as e:  # noqa: BLE001 - reported when the job is applied
                job.error = e
            finally:
                job.done.set()

        threading.Thread(target=run, name="clipfold-ahead", daemon=True).start()
        return job

    def _archive_ids(self, conversation_id: str) -> List[str]:
        """The ids of the conversation's archived blocks: batches and
        replacement records."""
        ids: List[str] = []
        for prefix in ("compaction-batch-%s-" % conversation_id, "compaction-replaced-%s-" % conversation_id):
            ids += [str(b["id"]) for b in self._c.store.list_blocks("archival", prefix)]
        return ids

    def _apply(self, st: _State, conversation_id: str, view: List[Any], caller_owned: bool, out: AheadResult) -> bool:
        """Applies the finished compaction to ``view`` (``out["history"]``
        then holds the new view), or drops it (``out["discarded"]`` says
        why). Reports whether it was applied."""
        job, st.job = st.job, None
        assert job is not None
        why = self._stale(job, view, caller_owned)
        if why is None and caller_owned and self._archive_ids(conversation_id) != job.blocks:
            why = "another compaction committed first"
        r = job.result
        if why is None and r is not None:
            with self._c._conversations.hold(conversation_id):
                answer = json.loads(self._c.host_handlers()["compaction_commit"](_dumps(r.get("commit")).encode("utf-8")))
            err = answer.get("error") if isinstance(answer, Mapping) else None
            if isinstance(err, Mapping):
                why = ("the history changed under it (%s)" % err.get("message") if err.get("code") == "conflict"
                       else "the commit failed: %s" % err.get("message"))
        if why is not None or r is None:
            out["discarded"] = why
            if job.error is not None or r is None or r["failed"] or "commit" not in r:
                st.idle = True  # nothing to apply: no new attempt before the limit
            return False
        if caller_owned:
            r["history"] = list(r["history"]) + view[len(job.snapshot):]
        else:
            r["history"] = self._c.store.active_messages(conversation_id)
        out["history"], out["compaction"], out["prepared"] = r["history"], r, True
        st.idle = False
        return True

    @staticmethod
    def _stale(job: _Job, view: List[Any], caller_owned: bool) -> Optional[str]:
        """Why the finished job cannot be applied to view, or None."""
        r = job.result
        if job.error is not None:
            return "it failed: %s" % job.error
        if r is None:
            return "it failed"
        if r["failed"]:
            return "it failed (%s): %s" % (r["failure_code"], r["failure_message"])
        if "commit" not in r:
            return "it had nothing to compact"
        if caller_owned:
            snap = job.snapshot
            if len(view) < len(snap) or not all(same(a, b) for a, b in zip(view, snap)):
                return "the history changed under it"
        return None
