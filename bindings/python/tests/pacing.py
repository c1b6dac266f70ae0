"""Compaction ahead of time inside an agent, paced for tests: the
summarizer (a gated one, on a real HTTP server) holds each compaction
started in the background while the agent makes more model calls, then
lets it finish, so that the next check finds it done. Nothing here
measures time: what a test asserts is what each check returned and what
the summarizer was asked while the model calls went on."""

from __future__ import annotations

import time
from typing import Any, Dict, List

from clipfold import Compactor

from summarizer import Summarizer


class Pacer:
    """Records every ``compact_ahead`` result of ``compactor`` (whichever
    adapter calls it) and, called at the start of each model call
    (:meth:`model_call`), holds a compaction started in the background for
    ``hold`` model calls: its summarizer request waits at the gate, then
    the gate opens until the work under way is done, and closes again."""

    def __init__(self, summarizer: Summarizer, compactor: Compactor, hold: int = 2) -> None:
        assert summarizer.gate is not None, "a gated summarizer"
        self.s, self.c, self.hold = summarizer, compactor, hold
        self.results: List[Dict[str, Any]] = []
        self.model_calls = 0
        self.held = 0  # compactions whose summarizer request was held while the model was called
        self._since: Any = None  # model calls since a compaction started, None when none is held
        real = compactor.compact_ahead

        def recording(*a: Any, **kw: Any) -> Any:
            r = real(*a, **kw)
            self.results.append(dict(r))
            if r["started"]:
                self._since = 0
            return r

        compactor.compact_ahead = recording  # type: ignore[method-assign]

    def model_call(self) -> None:
        self.model_calls += 1
        if self._since is None:
            return
        self._since += 1
        if self._since < self.hold:
            return
        deadline = time.monotonic() + 10
        while self.s.calls <= self.s.answered and time.monotonic() < deadline:
            time.sleep(0.005)  # the dry run's first summarizer request, on its way
        self.held += self.s.calls > self.s.answered
        assert self.s.gate is not None
        self.s.gate.set()
        self.c._ahead_state().wait()
        self.s.gate.clear()
        self._since = None

    @property
    def applied(self) -> List[Dict[str, Any]]:
        """The results of the checks that applied a compaction."""
        return [r for r in self.results if r["compaction"] is not None]

    @property
    def started(self) -> int:
        return sum(1 for r in self.results if r["started"])

    @property
    def waited(self) -> int:
        """How many checks waited for a compaction (the limit came first)."""
        return sum(1 for r in self.results if r["waited_ms"] > 0)

    def assert_applied_in_the_background(self, at_least: int) -> None:
        """Compactions were started in the background and applied on a
        later check, each held at the summarizer while the model was
        called; no check waited."""
        applied = self.applied
        assert len(applied) >= at_least, "compactions applied: %d" % len(applied)
        assert all(r["prepared"] and not r["compaction"]["failed"] for r in applied), \
            [(r["prepared"], r["discarded"]) for r in applied]
        assert self.waited == 0, "checks that waited: %d" % self.waited
        assert self.held >= len(applied), "the summarizer held %d of %d while the model was called" % (
            self.held, len(applied))
        first_start = next(k for k, r in enumerate(self.results) if r["started"])
        first_apply = next(k for k, r in enumerate(self.results) if r["compaction"] is not None)
        assert first_start < first_apply
