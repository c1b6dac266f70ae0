"""The distributions, as a new user gets them: the wheel built with
`python -m build` (its build dependencies from PyPI, in an isolated
environment), installed into a FRESH virtualenv, used from an unrelated
directory — Compactor and AsyncCompactor compact a conversation into an
SQLite file and answer a plain-language search with nothing but what the
wheel bundles. And the wheel built from the sdist is the same wheel."""

import email
import glob
import json
import os
import re
import subprocess
import sys
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

import clipfold

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
REPO = PROJECT.parent.parent
TIMEOUT = 900


def sh(args: List[str], cwd: Path, env: Dict[str, str]) -> str:
    r = subprocess.run(args, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=TIMEOUT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, "%s failed (%d):\n%s" % (" ".join(args), r.returncode, out[-6000:])
    return out


def clean_env() -> Dict[str, str]:
    """The environment of a user who never heard of clipfold's variables."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLIPFOLD_WASM", "CLIPFOLD_SQL_DIR", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def members(path: Path) -> Dict[str, bytes]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            return {n: z.read(n) for n in z.namelist()}
    with tarfile.open(path) as t:
        out = {}
        for m in t.getmembers():
            if m.isfile():
                f = t.extractfile(m)
                assert f is not None
                out[m.name] = f.read()
        return out


def expected_bundle() -> Dict[str, bytes]:
    """What the package must carry, read from the repository: the shipped
    plug-in and every .sql file of the Go store (by glob: a new migration
    step is bundled without anyone listing it)."""
    out = {"clipfold/clipfold.wasm": (REPO / "embed" / "clipfold.wasm").read_bytes()}
    for sub in ("migrations", "queries"):
        files = sorted((REPO / "hostfuncs" / "store" / "sqlite" / sub).glob("*.sql"))
        assert files, sub
        for f in files:
            out["clipfold/sql/%s/%s" % (sub, f.name)] = f.read_bytes()
    return out


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[Path, Path, Path, str]]:
    """(wheel built from the tree, sdist, wheel built from that sdist, build output)."""
    tmp = tmp_path_factory.mktemp("dists")
    env = clean_env()
    out = sh([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "direct"), str(PROJECT)], REPO, env)
    # no --wheel/--sdist: build makes the sdist, then the wheel from the unpacked sdist
    out += sh([sys.executable, "-m", "build", "--outdir", str(tmp / "via-sdist"), str(PROJECT)], REPO, env)
    direct = glob.glob(str(tmp / "direct" / "*.whl"))
    sdist = glob.glob(str(tmp / "via-sdist" / "*.tar.gz"))
    via = glob.glob(str(tmp / "via-sdist" / "*.whl"))
    assert len(direct) == len(sdist) == len(via) == 1, (direct, sdist, via)
    yield Path(direct[0]), Path(sdist[0]), Path(via[0]), out


def test_build_output_has_no_warnings_of_deprecation(dists: Tuple[Path, Path, Path, str]) -> None:
    out = dists[3]
    bad = [line for line in out.splitlines() if re.search(r"deprecat|SetuptoolsWarning|!!", line, re.I)]
    assert not bad, "\n".join(bad)


def test_wheel_bundles_the_plugin_the_sql_and_the_license(dists: Tuple[Path, Path, Path, str]) -> None:
    wheel = members(dists[0])
    name = dists[0].name
    assert name == "clipfold-%s-py3-none-any.whl" % clipfold.__version__, name
    for path, data in expected_bundle().items():
        assert wheel.get(path) == data, "%s missing or not the repository's bytes" % path
    bundled_sql = {n for n in wheel if n.startswith("clipfold/sql/")}
    assert bundled_sql == {n for n in expected_bundle() if n.startswith("clipfold/sql/")}, "stale or extra .sql"
    assert "clipfold/py.typed" in wheel
    info = "clipfold-%s.dist-info/" % clipfold.__version__
    assert wheel[info + "licenses/LICENSE"] == (REPO / "LICENSE").read_bytes()
    meta = email.message_from_bytes(wheel[info + "METADATA"])
    assert meta["Version"] == clipfold.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["Requires-Python"] == ">=3.9"
    requires = meta.get_all("Requires-Dist") or []
    assert [r for r in requires if r.startswith("extism")] == ["extism<2,>=1.1.1"], requires
    # clipfold.types needs NotRequired, in typing only from 3.11 on
    assert 'typing_extensions>=4.0; python_version < "3.11"' in requires, requires
    # The frameworks are extras (clipfold.langchain, clipfold.langgraph,
    # clipfold.pydantic_ai, clipfold.agents import them lazily): `pip
    # install clipfold` never pulls them in.
    assert sorted(meta.get_all("Provides-Extra") or []) == ["agents", "langchain", "pydantic-ai", "test"]
    extra_of = {"langchain": "langchain", "langgraph": "langchain", "pydantic-ai": "pydantic-ai",
                "openai-agents": "agents"}
    for r in requires:
        for prefix, extra in extra_of.items():
            if r.startswith(prefix):
                assert 'extra == "%s"' % extra in r, r
    urls = meta.get_all("Project-URL") or []
    assert any(u.startswith("Repository, https://github.com/clipfold/clipfold") for u in urls), urls
    classifiers = meta.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Framework :: AsyncIO" in classifiers
    assert meta["Keywords"] and "compaction" in meta["Keywords"]
    assert not any(n.startswith("tests/") or "/tests/" in n for n in wheel)


def test_sdist_carries_the_bundle_and_gives_the_same_wheel(dists: Tuple[Path, Path, Path, str]) -> None:
    direct, sdist, via, _ = dists
    top = sdist.name[:-len(".tar.gz")] + "/"
    s = members(sdist)
    for path, data in expected_bundle().items():
        assert s.get(top + "src/" + path) == data, path
    assert s[top + "LICENSE"] == (REPO / "LICENSE").read_bytes()
    a, b = members(direct), members(via)
    assert sorted(a) == sorted(b)
    differ = [n for n in a if a[n] != b[n]]
    assert not differ, "the wheel from the sdist differs from the wheel from the tree in %s" % differ


INSTALLED_SCRIPT = textwrap.dedent('''
    import asyncio, json, os, sys
    import clipfold
    from clipfold import AsyncCompactor, Compactor, SQLiteStore, _schema

    site = os.path.dirname(os.path.abspath(clipfold.__file__))
    assert clipfold.find_wasm() == os.path.join(site, "clipfold.wasm"), clipfold.find_wasm()
    assert str(_schema.sql_dir()) == os.path.join(site, "sql"), _schema.sql_dir()

    filler = ["Can you compare the museum opening hours on Saturday and Sunday, and tell me which day is "
              "less crowded for a family with two small children who get tired after lunch?",
              "On Saturday the museum opens at ten and closes at six; Sunday mornings are free of charge, so "
              "they are much busier. Saturday right at opening is the calmest time for the children.",
              "What about dinner? We would like a quiet restaurant with grilled fish, not too far from the "
              "hotel, and with a table outside if the weather is warm enough in the evening.",
              "There are three places within a ten minute walk of the hotel that serve grilled fish; the one "
              "by the river has outdoor tables and takes reservations for six thirty or later."]
    history = [{"role": "system", "content": "You are a travel assistant."},
               {"role": "user", "content": "We land in Lisbon on Friday at 8am. Where do we pick up the rental car?"},
               {"role": "assistant", "content": "The rental car is picked up at the Lisbon airport parking garage, "
                                                "level 2, from the Europcar desk, at 9am."}]
    for i in range(24):
        history.append({"role": "user" if i % 2 == 0 else "assistant", "content": filler[i % 4] + " (%d)" % i})
    config = {"keep_recent": 4, "chunk_size": 8}
    question = "where do we pick up the car?"

    def check(result, hits):
        assert not result["failed"], result
        assert result["messages_compressed"] >= 20, result
        assert result["history"][0]["content"].startswith("[Context Summary"), result["history"][0]
        assert hits, "no hit for %r" % question
        answer = [h for h in hits[:3] if "airport" in h["text"]]
        assert answer, hits[:3]
        return {"compressed": result["messages_compressed"], "answer": answer[0]["kind"]}

    with Compactor(store="sync.db", config=config) as c:
        r = c.compress("trip", history)
        out = {"sync": check(r, c.search(question, conversation_id="trip"))}

    async def main():
        async with AsyncCompactor(store="async.db", config=config) as c:
            r = await c.compress("trip", history)
            return check(r, await c.search(question, conversation_id="trip"))
    out["async"] = asyncio.run(main())

    with SQLiteStore("sync.db") as s:  # the file, reopened: durable
        assert s.active_messages("trip")[0]["content"].startswith("[Context Summary")
    out["wasm"] = clipfold.find_wasm()
    print(json.dumps(out))
''')


def test_wheel_in_a_fresh_virtualenv_from_an_unrelated_directory(dists: Tuple[Path, Path, Path, str],
                                                                  tmp_path: Path) -> None:
    env = clean_env()
    v = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(str(v))
    py = v / ("Scripts" if os.name == "nt" else "bin") / "python"
    sh([str(py), "-m", "pip", "install", "--quiet", str(dists[0])], tmp_path, env)
    # An unrelated directory that even has a build/clipfold.wasm of its own
    # (not a plug-in): the installed package must use what it bundles.
    work = tmp_path / "somewhere" / "else"
    (work / "build").mkdir(parents=True)
    (work / "build" / "clipfold.wasm").write_bytes(b"not a plug-in")
    (work / "script.py").write_text(INSTALLED_SCRIPT, encoding="utf-8")
    out = sh([str(py), "-W", "error::DeprecationWarning", "script.py"], work, env)
    res = json.loads(out.strip().splitlines()[-1])
    assert res["sync"]["compressed"] >= 20 and res["async"] == res["sync"]
    assert "site-packages" in res["wasm"] and str(REPO) not in res["wasm"]
