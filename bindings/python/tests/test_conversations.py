"""Conversations are apart: callers number each conversation's messages
alike (msg_0, msg_1, …), and a message is known by its conversation and
id — stored, compacted, recalled and searched in its own conversation."""

from typing import Any, Dict, List

from clipfold import Compactor

from test_compress import CONFIG, build_conversation


def numbered(topic: str, n: int = 30) -> List[Dict[str, Any]]:
    """build_conversation with ids msg_0, msg_1, … and the topic in every text."""
    out = []
    for i, m in enumerate(build_conversation(n)):
        m = dict(m, id="msg_%d" % i)
        if isinstance(m.get("content"), str):
            m["content"] = "[%s] %s" % (topic, m["content"])
        out.append(m)
    return out


def assert_all_kept(c: Compactor, conversation_id: str, messages: List[Dict[str, Any]]) -> None:
    """Every message is in the conversation, active or in recall, as given."""
    active = {m["id"]: m for m in c.store.active_messages(conversation_id)}
    for m in messages:
        kept = active.get(m["id"]) or c.store.recall(m["id"], conversation_id)
        assert kept == m, "lost or mixed up: %s" % m["id"]


def test_a_second_conversation_numbering_alike_is_stored_and_compacted(wasm: str) -> None:
    alpha, beta = numbered("alpha"), numbered("beta")
    with Compactor(wasm, config=CONFIG) as c:
        r = c.compress("c1", alpha)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        r = c.compress("c2", beta)
        assert not r["failed"] and r["messages_compressed"] > 0, r
        # The caller replaces its list with the result: beta's kept
        # messages behind its clip-archive, none of alpha's.
        kept = [m for m in r["history"] if m["id"].startswith("msg_")]
        assert kept and all(m == beta[int(m["id"][4:])] for m in kept)
        assert_all_kept(c, "c1", alpha)
        assert_all_kept(c, "c2", beta)
        # Replacing the list and going on works too: the next turn, sent
        # with the compacted history, is stored in c2 and compacted later.
        new = [dict(m, id="msg_%d" % (31 + i)) for i, m in enumerate(numbered("beta", 12)[1:])]
        r = c.compress("c2", r["history"] + new)
        assert not r["failed"], r
        assert_all_kept(c, "c2", beta + new)
        # Search and read find each conversation's own message.
        hits = [h for h in c.search("parser bug", "c2") if h["kind"] == "message"]
        assert hits and all(h["conversation_id"] == "c2" and "[beta]" in h["text"] for h in hits)
        both = c.store.recalled_ids("c1", [h["id"] for h in hits])
        assert both
        for mid in both:
            assert "[beta]" in c.store.read(mid, "c2")["message"]["content"]
            assert "[alpha]" in c.store.read(mid, "c1")["message"]["content"]


def test_conversations_numbering_alike_are_active_at_once(wasm: str) -> None:
    alpha, beta = numbered("alpha", 6), numbered("beta", 6)
    with Compactor(wasm, config=CONFIG) as c:
        # Not due: stored, both active at once under the same ids.
        assert c.compact_if_due("c1", alpha) is None
        assert c.compact_if_due("c2", beta) is None
        assert c.store.active_messages("c1") == alpha and c.store.active_messages("c2") == beta
        # Both grow and are compacted, each on its own messages.
        alpha += [dict(m, id="msg_%d" % (7 + i)) for i, m in enumerate(numbered("alpha", 30)[1:])]
        beta += [dict(m, id="msg_%d" % (7 + i)) for i, m in enumerate(numbered("beta", 30)[1:])]
        for conv, msgs in (("c1", alpha), ("c2", beta)):
            r = c.compress(conv, msgs)
            assert not r["failed"] and r["messages_compressed"] > 0, r
        assert_all_kept(c, "c1", alpha)
        assert_all_kept(c, "c2", beta)


def test_ids_only_in_another_conversations_recall_are_not_skipped(wasm: str) -> None:
    """The report exactly: the second conversation's ids are all in the
    first one's recall. They were skipped as stored already, and the
    compaction returned failed: false with an empty history."""
    alpha = numbered("alpha")
    with Compactor(wasm, config=CONFIG) as c:
        assert not c.compress("c1", alpha)["failed"]
        active = {m["id"] for m in c.store.active_messages("c1")}
        beta = [m for m in numbered("beta") if m["id"] not in active]  # in c1's recall
        assert len(beta) > 10
        r = c.compress("c2", beta)
        assert not r["failed"] and r["messages_compressed"] > 0 and r["history"], r
        assert_all_kept(c, "c2", beta)
        assert_all_kept(c, "c1", alpha)
