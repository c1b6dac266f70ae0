#!/usr/bin/env bash
# install-tinygo.sh — install the pinned TinyGo toolchain clipfold builds with.
#
# Usage: scripts/install-tinygo.sh [--env]
#   stdout: the path of the tinygo binary (with --env: the path of an env file
#   to source, which exports TINYGO, TINYGOROOT, CLIPFOLD_TINYGO_TARGET and
#   CLIPFOLD_TINYGO_LLVM). Progress and errors go to stderr.
#
# What it does (idempotent; a second run is a fast no-op):
#   1. apt: installs LLVM/clang/lld (version picked from what apt offers:
#      19, then 20, 18, 17, 16, 15), the wasm32 compiler-rt builtins, Debian's
#      prebuilt wasi-libc and binaryen (wasm-opt). Needs root (or sudo) only
#      when something is missing.
#   2. go: builds TinyGo $TINYGO_VERSION from the Go module proxy with the
#      matching -tags=llvmNN, in a scratch module under the cache dir.
#   3. root: assembles a TINYGOROOT from the module's src/ and targets/ (the
#      module zip has no git submodules: no wasi-libc sources, no
#      compiler-rt sources, no src/net), and renders the clipfold-wasip1
#      target (scripts/tinygo/clipfold-wasip1.json.in) to link Debian's
#      wasi-libc and compiler-rt builtins instead. The same target is also
#      installed as targets/wasip1.json, so -target=wasip1 works too.
#   4. verify: builds a tiny c-shared wasip1 module with the new toolchain.
#
# Environment:
#   CLIPFOLD_CACHE        cache root (default: $HOME/.cache/clipfold)
#   CLIPFOLD_TINYGO_LLVM  force an LLVM major version (15..20)
#   CLIPFOLD_SKIP_APT     1: never call apt-get (fail if packages are missing)
#
# Installs into $CLIPFOLD_CACHE/tinygo-$TINYGO_VERSION-llvmNN and writes
# $CLIPFOLD_CACHE/tinygo.env (a copy of that dir's env.sh) for callers.
set -euo pipefail

readonly TINYGO_VERSION=v0.41.1
readonly TINYGO_MODULE=github.com/tinygo-org/tinygo
readonly TARGET_NAME=clipfold-wasip1
# The shipped plug-in (embed/clipfold.wasm) is built with LLVM 19 (Debian 12's
# llvm-19 packages); scripts/build-tinygo.sh records the exact versions beside
# the build and `make embed` refuses another toolchain. CLIPFOLD_TINYGO_LLVM
# picks another LLVM (15..20) for local experiments only.
readonly LLVM_PREFERENCE=(19)

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPT_DIR
readonly TEMPLATE="$SCRIPT_DIR/tinygo/$TARGET_NAME.json.in"
CACHE=${CLIPFOLD_CACHE:-${HOME:?HOME is not set; set CLIPFOLD_CACHE}/.cache/clipfold}
readonly CACHE

print_what="bin"
case "${1:-}" in
	"") ;;
	--env) print_what="env" ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
		exit 0
		;;
	*)
		echo "install-tinygo: unknown argument: $1 (try --help)" >&2
		exit 2
		;;
esac

STEP=setup
log() { printf 'install-tinygo: %s\n' "$*" >&2; }
die() {
	printf 'install-tinygo: FAILED in step "%s": %s\n' "$STEP" "$*" >&2
	exit 1
}
# shellcheck disable=SC2317 # invoked by the ERR trap
on_err() { # EXIT-CODE LINE
	printf 'install-tinygo: FAILED in step "%s" (exit %s, line %s)\n' "$STEP" "$1" "$2" >&2
}
trap 'on_err "$?" "$LINENO"' ERR

[[ -f $TEMPLATE ]] || die "missing target template $TEMPLATE"
command -v go >/dev/null || die "go is not on PATH (Go >= 1.24 is needed to build TinyGo)"

# The stamp names everything the installed root depends on: a change of the
# script, the target template or the versions re-assembles the root (the
# TinyGo binary itself is reused if its version and LLVM are unchanged).
stamp_for() { # LLVM
	{
		echo "tinygo=$TINYGO_VERSION llvm=$1"
		sha256sum "${BASH_SOURCE[0]}" "$TEMPLATE" | cut -d' ' -f1
	} | sha256sum | cut -d' ' -f1
}

llvm_tag() { # LLVM -> go build tag ("" for TinyGo's default, LLVM 20)
	if [[ $1 == 20 ]]; then echo ""; else echo "llvm$1"; fi
}

apt_pkgs() { # LLVM -> the Debian packages the toolchain needs
	echo "llvm-$1-dev libclang-$1-dev clang-$1 lld-$1 libclang-rt-$1-dev-wasm32 wasi-libc binaryen g++"
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

all_installed() { # PKG...
	local p
	for p in "$@"; do pkg_installed "$p" || return 1; done
}

tools_present() { # LLVM
	command -v "clang-$1" >/dev/null && command -v "wasm-ld-$1" >/dev/null && command -v wasm-opt >/dev/null
}

root_dir() { echo "$CACHE/tinygo-$TINYGO_VERSION-llvm$1"; }

is_complete() { # LLVM
	local d
	d=$(root_dir "$1")
	[[ -x $d/bin/tinygo && -f $d/.stamp && $(cat "$d/.stamp") == "$(stamp_for "$1")" ]] && tools_present "$1"
}

finish() { # LLVM
	local d
	d=$(root_dir "$1")
	mkdir -p "$CACHE"
	cp "$d/env.sh" "$CACHE/tinygo.env.tmp.$$" && mv -f "$CACHE/tinygo.env.tmp.$$" "$CACHE/tinygo.env"
	if [[ $print_what == env ]]; then echo "$d/env.sh"; else echo "$d/bin/tinygo"; fi
	exit 0
}

candidates=("${LLVM_PREFERENCE[@]}")
if [[ -n ${CLIPFOLD_TINYGO_LLVM:-} ]]; then
	[[ $CLIPFOLD_TINYGO_LLVM =~ ^(15|16|17|18|19|20)$ ]] || die "CLIPFOLD_TINYGO_LLVM must be one of 15..20, got '$CLIPFOLD_TINYGO_LLVM'"
	candidates=("$CLIPFOLD_TINYGO_LLVM")
fi

# Fast path: a complete install for the first usable LLVM version.
for v in "${candidates[@]}"; do
	if is_complete "$v"; then finish "$v"; fi
done

mkdir -p "$CACHE" || die "cannot create cache dir $CACHE"
exec 9>"$CACHE/.install-tinygo.lock"
if command -v flock >/dev/null; then
	if ! flock -n 9; then
		log "waiting for another install (lock $CACHE/.install-tinygo.lock)"
		flock 9
	fi
	for v in "${candidates[@]}"; do
		if is_complete "$v"; then finish "$v"; fi
	done
fi

start=$SECONDS

# ---------------------------------------------------------------- 1. apt ---
STEP="apt: choose LLVM version"
LLVM=""
# Prefer a version whose packages are all installed already (no root needed).
for v in "${candidates[@]}"; do
	# shellcheck disable=SC2046 # word splitting of the package list is intended
	if all_installed $(apt_pkgs "$v") && tools_present "$v"; then
		LLVM=$v
		break
	fi
done

if [[ -z $LLVM ]]; then
	[[ ${CLIPFOLD_SKIP_APT:-0} == 1 ]] && die "packages missing and CLIPFOLD_SKIP_APT=1; need: $(apt_pkgs "${candidates[0]}")"
	command -v apt-get >/dev/null || die "apt-get not found: install LLVM/clang/lld ${candidates[*]}, libclang-rt-NN-dev-wasm32, wasi-libc and binaryen by hand"
	SUDO=()
	if [[ $(id -u) != 0 ]]; then
		command -v sudo >/dev/null || die "not root and no sudo: cannot apt-get install the toolchain packages"
		SUDO=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	APT_LOG="$CACHE/install-tinygo-apt.log"
	: >"$APT_LOG"
	apt_run() { # ARGS... — quiet unless it fails
		if ! "${SUDO[@]}" apt-get "$@" >>"$APT_LOG" 2>&1; then
			tail -n 25 "$APT_LOG" >&2
			die "apt-get $* failed (full log: $APT_LOG)"
		fi
	}
	STEP="apt: apt-get update"
	log "apt-get update"
	apt_run update

	STEP="apt: choose LLVM version"
	has_candidate() { # PKG
		local c
		c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
		[[ -n $c && $c != "(none)" ]]
	}
	for v in "${candidates[@]}"; do
		if has_candidate "llvm-$v-dev" && has_candidate "libclang-$v-dev" && has_candidate "clang-$v" && has_candidate "lld-$v"; then
			LLVM=$v
			break
		fi
	done
	[[ -n $LLVM ]] || die "apt offers none of llvm-{${candidates[*]// /,}}-dev with clang/lld; TinyGo $TINYGO_VERSION needs LLVM 15..20"
	# shellcheck disable=SC2207 # the package list has no globbing characters
	pkgs=($(apt_pkgs "$LLVM"))
	if ! has_candidate "libclang-rt-$LLVM-dev-wasm32"; then
		# The builtins are plain wasm32 object files: another LLVM's will do.
		rt=""
		for w in 19 20 18 17 16; do
			if has_candidate "libclang-rt-$w-dev-wasm32"; then
				rt="libclang-rt-$w-dev-wasm32"
				break
			fi
		done
		[[ -n $rt ]] || die "apt offers no libclang-rt-NN-dev-wasm32 (wasm32 compiler-rt builtins)"
		pkgs=("${pkgs[@]/libclang-rt-$LLVM-dev-wasm32/$rt}")
	fi
	for p in wasi-libc binaryen; do
		has_candidate "$p" || die "apt offers no package $p"
	done
	STEP="apt: apt-get install (LLVM $LLVM)"
	log "apt-get install ${pkgs[*]}"
	apt_run install -y --no-install-recommends "${pkgs[@]}"
	tools_present "$LLVM" || die "clang-$LLVM, wasm-ld-$LLVM or wasm-opt still missing from PATH after apt-get install"
fi
log "using LLVM $LLVM ($((SECONDS - start)) s)"

STEP="apt: locate wasi-libc and compiler-rt builtins"
WASI_INCLUDE="" WASI_LIBDIR=""
for t in wasm32-wasi wasm32-wasip1; do
	if [[ -f /usr/include/$t/stdlib.h && -f /usr/lib/$t/libc.a ]]; then
		WASI_INCLUDE=/usr/include/$t WASI_LIBDIR=/usr/lib/$t
		break
	fi
done
[[ -n $WASI_INCLUDE ]] || die "wasi-libc headers/libc.a not found under /usr/include/wasm32-wasi and /usr/lib/wasm32-wasi (package wasi-libc)"
RT_BUILTINS=""
for f in /usr/lib/llvm-"$LLVM"/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a \
	/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a; do
	if [[ -f $f ]]; then
		RT_BUILTINS=$f
		break
	fi
done
[[ -n $RT_BUILTINS ]] || die "libclang_rt.builtins-wasm32.a not found under /usr/lib/llvm-*/lib/clang/*/lib/wasi (package libclang-rt-$LLVM-dev-wasm32)"

# ----------------------------------------------------------------- 2. go ---
STEP="go: build TinyGo $TINYGO_VERSION (tags: $(llvm_tag "$LLVM"))"
ROOT=$(root_dir "$LLVM")
BUILD="$CACHE/.build-tinygo-$TINYGO_VERSION-llvm$LLVM"
BIN_STAMP="tinygo=$TINYGO_VERSION llvm=$LLVM"
mkdir -p "$BUILD/mod"
gocmd() { (cd "$BUILD/mod" && GOWORK=off GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1 GOFLAGS="${GOFLAGS:-} -mod=mod" go "$@"); }
if [[ -x $BUILD/tinygo && -f $BUILD/.stamp && $(cat "$BUILD/.stamp") == "$BIN_STAMP" ]]; then
	log "reusing $BUILD/tinygo"
else
	rm -f "$BUILD/.stamp" "$BUILD/tinygo"
	cat >"$BUILD/mod/go.mod" <<EOF
module clipfold.local/tinygo-build

go 1.23
EOF
	: >"$BUILD/mod/go.sum"
	log "go get $TINYGO_MODULE@$TINYGO_VERSION"
	gocmd get "$TINYGO_MODULE@$TINYGO_VERSION" >&2 ||
		die "go get $TINYGO_MODULE@$TINYGO_VERSION failed (is the Go module proxy reachable?)"
	log "go build -tags=$(llvm_tag "$LLVM") $TINYGO_MODULE (about a minute)"
	# PATH first: go-llvm's cgo flags call llvm-config-NN only via #cgo lines,
	# but make sure the matching clang/llvm tools are found first anyway.
	PATH="/usr/lib/llvm-$LLVM/bin:$PATH" gocmd build -tags="$(llvm_tag "$LLVM")" \
		-ldflags="-X $TINYGO_MODULE/goenv.TINYGOROOT=$ROOT" \
		-o "$BUILD/tinygo" "$TINYGO_MODULE" >&2 ||
		die "go build of TinyGo failed (needs llvm-$LLVM-dev, libclang-$LLVM-dev and g++)"
	echo "$BIN_STAMP" >"$BUILD/.stamp"
	log "built TinyGo ($((SECONDS - start)) s)"
fi

# --------------------------------------------------------------- 3. root ---
STEP="root: assemble TINYGOROOT"
gocmd mod download "$TINYGO_MODULE" >&2 || die "go mod download $TINYGO_MODULE failed (is the Go module proxy reachable?)"
MODDIR=$(gocmd list -m -f '{{.Dir}}' "$TINYGO_MODULE") || die "cannot locate $TINYGO_MODULE in the module cache"
[[ -d $MODDIR/src/runtime && -d $MODDIR/targets ]] || die "$MODDIR does not look like TinyGo's source tree"
TMP="$ROOT.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP/bin"
cp -R "$MODDIR/src" "$MODDIR/targets" "$MODDIR/lib" "$TMP/"
chmod -R u+w "$TMP"
# src/net is a git submodule upstream, absent from the module zip: packages
# that import "net" cannot be built with this toolchain.
mkdir -p "$TMP/src/net"
cp "$BUILD/tinygo" "$TMP/bin/tinygo"

STEP="root: render $TARGET_NAME target"
FEATURES="+bulk-memory,+bulk-memory-opt,+call-indirect-overlong,+mutable-globals,+nontrapping-fptoint,+sign-ext,-multivalue,-reference-types"
if ((LLVM < 20)); then
	# bulk-memory-opt and call-indirect-overlong are LLVM 20 feature names.
	FEATURES="+bulk-memory,+mutable-globals,+nontrapping-fptoint,+sign-ext,-multivalue,-reference-types"
fi
sed -e "s|@FEATURES@|$FEATURES|" -e "s|@WASI_INCLUDE@|$WASI_INCLUDE|" \
	-e "s|@WASI_LIBDIR@|$WASI_LIBDIR|" -e "s|@CLANG_RT_BUILTINS@|$RT_BUILTINS|" \
	"$TEMPLATE" >"$TMP/targets/$TARGET_NAME.json"
if grep -q '@[A-Z_]*@' "$TMP/targets/$TARGET_NAME.json"; then die "unrendered placeholder in $TARGET_NAME.json"; fi
cp "$TMP/targets/$TARGET_NAME.json" "$TMP/targets/wasip1.json"

cat >"$TMP/env.sh" <<EOF
# Generated by clipfold scripts/install-tinygo.sh; source it.
export TINYGO='$ROOT/bin/tinygo'
export TINYGOROOT='$ROOT'
export CLIPFOLD_TINYGO_TARGET='$TARGET_NAME'
export CLIPFOLD_TINYGO_LLVM='$LLVM'
EOF

# ------------------------------------------------------------- 4. verify ---
STEP="verify: build a c-shared wasip1 module with the new toolchain"
mkdir -p "$TMP/verify"
cat >"$TMP/verify/go.mod" <<EOF
module verify

go 1.23
EOF
cat >"$TMP/verify/main.go" <<'EOF'
package main

import "strconv"

//go:wasmexport add
func add(a, b int32) int32 { return int32(len(strconv.Itoa(int(a)))) + b }

func main() {}
EOF
(cd "$TMP/verify" && GOWORK=off TINYGOROOT="$TMP" "$TMP/bin/tinygo" build -target="$TARGET_NAME" \
	-buildmode=c-shared -no-debug -scheduler=none -o "$TMP/verify/verify.wasm" .) >&2 ||
	die "TinyGo could not build a trivial wasip1 module (see the errors above)"
[[ -s $TMP/verify/verify.wasm ]] || die "TinyGo produced no verify.wasm"

STEP="root: install into $ROOT"
stamp_for "$LLVM" >"$TMP/.stamp"
rm -rf "$ROOT"
mv "$TMP" "$ROOT"
log "installed TinyGo $TINYGO_VERSION (LLVM $LLVM) in $ROOT in $((SECONDS - start)) s"
finish "$LLVM"
