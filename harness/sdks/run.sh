#!/usr/bin/env bash
# Loads clipfold plug-ins with every stable Extism SDK, nothing else, and
# checks the cases of harness/sdks/cases.json (see harness/sdks/README.md).
#
#   harness/sdks/run.sh [WASM...]
#
# Default WASMs: embed/clipfold.wasm and build/clipfold.wasm (make build).
# Prints one line per SDK and module, with the SDK's version, then
# "N passed, N failed"; exits non-zero on any failure.
#
# Environment:
#   CLIPFOLD_SDKS            the SDKs to run, space-separated (default: all of
#                            go js js-worker python rust java)
#   CLIPFOLD_SDK_VENV        the Python virtualenv (default harness/sdks/python/.venv)
#   CLIPFOLD_RUST_TOOLCHAIN  a rustup toolchain for the Rust program (default:
#                            the default one; it needs rustc >= 1.91)
#   CLIPFOLD_CACHE           cache root (default $HOME/.cache/clipfold, as for
#                            TinyGo): the Rust program builds Wasmtime from
#                            source (dev profile, about 11 CPU-minutes cold)
#                            into $CLIPFOLD_CACHE/sdk-rust-target, so a fresh
#                            clone on the same machine builds it warm
#   CLIPFOLD_SDKS_VERBOSE=1  print every program's whole output
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cases="$here/cases.json"
sdks=(${CLIPFOLD_SDKS:-go js js-worker python rust java})
verbose="${CLIPFOLD_SDKS_VERBOSE:-0}"

wasms=()
if (($#)); then
	for w in "$@"; do wasms+=("$(cd "$(dirname "$w")" && pwd)/$(basename "$w")"); done
else
	wasms=("$root/embed/clipfold.wasm" "$root/build/clipfold.wasm")
fi
for w in "${wasms[@]}"; do
	if [ ! -f "$w" ]; then
		echo "run.sh: $w does not exist (make build makes build/clipfold.wasm)" >&2
		exit 2
	fi
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

now() { echo "$EPOCHREALTIME"; }
# indent FILE [PREFIX]: a program's or tool's output, indented, without
# colour codes (Maven writes some even with -q), every line ended, long
# lines cut (a dying Node worker prints its whole bundled source).
indent() {
	awk -v p="${2:-}" '{ gsub(/\033\[[0-9;]*m/, ""); if (length($0) > 400) $0 = substr($0, 1, 400) " …"; if (length($0)) print "    " p $0 }' "$1"
}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fs", b - a }'; }

# The extism crate 1.30.0 builds Wasmtime 43, whose rust-version is 1.91.
rust_min=1.91
rust_ok() { # rustc --version output → whether it is at least rust_min
	awk -v min="$rust_min" '{ split($2, v, /[.-]/); split(min, m, "."); exit !(v[1] > m[1] || (v[1] == m[1] && v[2] >= m[2])) }'
}
rust_toolchain() {
	if [ -n "${CLIPFOLD_RUST_TOOLCHAIN:-}" ]; then
		echo "+$CLIPFOLD_RUST_TOOLCHAIN"
	elif rustc --version 2>/dev/null | rust_ok; then
		echo ""
	elif rustup run nightly rustc --version 2>/dev/null | rust_ok; then
		echo "+nightly"
	else
		return 1
	fi
}

# prepare SDK: builds or installs what the SDK's program needs; sets cmd
# (the program, taking CASES WASM). Its output goes to $work/SDK.prep.
prepare() {
	local sdk="$1"
	case "$sdk" in
	go)
		(cd "$root" && go build -o "$work/sdk-go" ./harness/sdks/go) &&
			cmd=("$work/sdk-go")
		;;
	js | js-worker)
		if [ ! -f "$work/js.done" ]; then
			(cd "$here/js" && npm ci --no-audit --no-fund) && touch "$work/js.done"
		fi &&
			cmd=(node "$here/js/check.mjs") &&
			if [ "$sdk" = js-worker ]; then cmd+=(--worker); fi
		;;
	python)
		local venv="${CLIPFOLD_SDK_VENV:-$here/python/.venv}"
		{ [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
			"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/python/requirements.txt" &&
			cmd=("$venv/bin/python" "$here/python/check.py")
		;;
	rust)
		local tc
		if ! tc="$(rust_toolchain)"; then
			echo "no rustc >= $rust_min: the default is $(rustc --version 2>&1), and no nightly toolchain is new enough" >&2
			return 1
		fi
		echo "toolchain: ${tc:-default} ($(rustc ${tc} --version))" >&2
		local target="${CLIPFOLD_CACHE:-$HOME/.cache/clipfold}/sdk-rust-target"
		# the dev profile (Cargo.toml: no debug info, Cranelift optimized):
		# 0.6 of the CPU time of --release cold
		(cd "$here/rust" && CARGO_TARGET_DIR="$target" cargo ${tc} build --locked) &&
			cmd=("$target/debug/clipfold-sdk-check")
		;;
	java)
		(cd "$here/java" && mvn -B -q --no-transfer-progress -Dstyle.color=never compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt) &&
			cmd=(java -cp "$here/java/target/classes:$(cat "$here/java/target/classpath.txt")" org.clipfold.sdkcheck.Check)
		;;
	*)
		echo "unknown SDK $sdk" >&2
		return 1
		;;
	esac
}

passed=0
failed=0
for sdk in "${sdks[@]}"; do
	cmd=()
	t0="$(now)"
	if ! prepare "$sdk" >"$work/$sdk.prep" 2>&1; then
		for w in "${wasms[@]}"; do
			printf 'FAIL %-9s %-48s %-22s setup failed\n' "$sdk" "?" "${w#"$root"/}"
			failed=$((failed + 1))
		done
		indent "$work/$sdk.prep" | tail -40
		continue
	fi
	printf '  .. %-9s setup %s\n' "$sdk" "$(secs "$t0" "$(now)")"
	[ "$verbose" = 1 ] && indent "$work/$sdk.prep"
	for w in "${wasms[@]}"; do
		t0="$(now)"
		"${cmd[@]}" "$cases" "$w" >"$work/out" 2>"$work/err"
		rc=$?
		t="$(secs "$t0" "$(now)")"
		version="$(sed -n 's/^sdk //p' "$work/out" | head -1)"
		oks="$(grep -c '^ok ' "$work/out")"
		fails="$(grep -c '^FAIL ' "$work/out")"
		if [ "$rc" -eq 0 ] && [ "$fails" -eq 0 ] && [ "$oks" -gt 0 ]; then
			status=ok
			passed=$((passed + 1))
		else
			status=FAIL
			failed=$((failed + 1))
		fi
		printf '%-4s %-9s %-48s %-22s %s/%s cases  %s\n' "$status" "$sdk" "${version:-?}" "${w#"$root"/}" \
			"$oks" "$((oks + fails))" "$t"
		if [ "$status" = FAIL ] || [ "$verbose" = 1 ]; then
			indent "$work/out"
			indent "$work/err" "stderr: " | tail -40
		fi
	done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
