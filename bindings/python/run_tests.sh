#!/usr/bin/env bash
# Runs the Python host's test suite: creates bindings/python/.venv when
# needed, installs the package with its test extra and the extras of the
# agent frameworks (LangChain with its OpenAI and Anthropic chat models,
# Pydantic AI with its OpenAI and Anthropic models, the OpenAI Agents SDK:
# pinned by tests/requirements-frameworks.txt),
# runs pytest.
# The suite tests the build under test: $CLIPFOLD_WASM, by default the
# checkout's build/clipfold.wasm (make build), and the checkout's SQL files
# ($CLIPFOLD_SQL_DIR), not the copies the installed package bundles (those
# are tested by tests/test_packaging.py, which builds the distributions and
# installs the wheel into a fresh virtualenv: it needs PyPI).
# Exit status: pytest's, except that "no tests collected" (5) is a failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CLIPFOLD_WASM="${CLIPFOLD_WASM:-$repo/build/clipfold.wasm}"
export CLIPFOLD_SQL_DIR="${CLIPFOLD_SQL_DIR:-$repo/hostfuncs/store/sqlite}"
venv="${CLIPFOLD_PY_VENV:-$here/.venv}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
	"$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
# The agent frameworks at the versions the tests prove:
# tests/requirements-frameworks.txt pins them and what they pull in
# (CLIPFOLD_PY_UNPINNED=1: no pins, what the venv holds or pip resolves —
# run_latest.sh).
pins=(-c "$here/tests/requirements-frameworks.txt")
[ "${CLIPFOLD_PY_UNPINNED:-}" = 1 ] && pins=()
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" \
	"$here[test,langchain,pydantic-ai,agents]" "pydantic-ai-slim[openai,anthropic]" langchain-openai langchain-anthropic

cd "$here"
set +e
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
	echo "run_tests.sh: pytest collected no tests; that is a failure" >&2
	exit 1
fi
exit "$rc"
