"""`import clipfold` loads only what a synchronous, offline program needs:
asyncio (AsyncCompactor, async LLMs), urllib.request with http.client and
ssl (the HTTP LLMs' first request) and inspect are imported on first use.
Together they were about 40% of `import clipfold`, which is most of the
Python cold start (docs/benchmarks-history.md, "Every plain Extism SDK
measured")."""

import json
import os
import subprocess
import sys

from conftest import wasm_path

SCRIPT = """
import json, sys
import clipfold
c = clipfold.Compactor()
s = c.split([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], {"keep_recent": 1})
before = sorted(m for m in ("asyncio", "urllib.request", "ssl", "inspect") if m in sys.modules)
a = clipfold.AsyncCompactor
print(json.dumps({"kept": len(s["to_keep"]), "loaded": before, "async": a.__name__, "asyncio_after": "asyncio" in sys.modules}))
c.close()
"""


def test_import_loads_no_asyncio_http_or_inspect() -> None:
    env = dict(os.environ, CLIPFOLD_WASM=wasm_path())
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["kept"] == 1
    assert got["loaded"] == [], "imported at `import clipfold` or by a sync offline call: %s" % got["loaded"]
    assert got["async"] == "AsyncCompactor" and got["asyncio_after"], "AsyncCompactor still importable, with asyncio"
