#!/usr/bin/env bash
# The Python adapters against the newest release of every framework:
# installs them fresh (pip install -U, no constraints) into a new
# virtualenv (build/py-latest-venv, made anew each run), runs the adapter
# tests (LangChain and LangGraph, Pydantic AI, the OpenAI Agents SDK; not
# test_versions_proven, which checks the pins) through run_tests.sh with
# CLIPFOLD_PY_UNPINNED=1, and on success writes the versions it tested into
# README.md ("Newest releases tested"). A framework release that breaks an
# adapter fails this run the day it lands; tests/requirements-frameworks.txt
# keeps the versions the other run proves.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${CLIPFOLD_PY_LATEST_VENV:-$repo/build/py-latest-venv}"
python="${PYTHON:-python3}"
frameworks=(langchain langchain-core langgraph langgraph-prebuilt langchain-openai langchain-anthropic "pydantic-ai-slim[openai,anthropic]" openai-agents)

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "${frameworks[@]}"

CLIPFOLD_PY_VENV="$venv" CLIPFOLD_PY_UNPINNED=1 bash "$here/run_tests.sh" \
	-k "(test_langchain or test_first_turn or test_pydantic_ai or test_openai_agents) and not versions_proven"

versions="$("$venv/bin/python" - <<'EOF'
from importlib.metadata import version
names = ["langchain", "langchain-core", "langgraph", "pydantic-ai-slim", "openai-agents"]
print(", ".join("%s %s" % (n, version(n)) for n in names))
EOF
)"
line="Newest releases tested: $versions ($(date -u +%Y-%m-%d), Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'))."
"$venv/bin/python" - "$here/README.md" "$line" <<'EOF'
import re, sys
path, line = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
new, n = re.subn(r"(<!-- run_latest\.sh -->\n).*?(\n<!-- /run_latest\.sh -->)", lambda m: m.group(1) + line + m.group(2),
                 text, flags=re.S)
if n != 1:
    sys.exit("run_latest.sh: README.md has no <!-- run_latest.sh --> line to update")
open(path, "w", encoding="utf-8").write(new)
EOF
echo "run_latest.sh: $line"
