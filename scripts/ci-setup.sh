#!/usr/bin/env bash
# Installs the system packages the test suites need on a fresh Debian
# machine. Idempotent: a second run installs nothing.
#  - PostgreSQL server (the PostgreSQL store suite runs against a real one)
#  - python3-venv (the Python host's suite, harness/sdks/python and
#    scripts/try-as-user.sh each build a virtualenv with pip in it)
#  - maven, when missing (harness/sdks/java)
#  - qemu-user (make check-bigendian runs core's and api's tests on s390x)
# Go, Node.js and Python are expected on the machine (the project's kind
# provides them), and so are cargo, Java and Maven for harness/sdks (make
# test-sdks). TinyGo and its LLVM come from scripts/install-tinygo.sh,
# called by `make build-tinygo`.
set -euo pipefail

need=()
have_pg() {
  command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}
have_pg || need+=(postgresql)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
command -v mvn >/dev/null 2>&1 || need+=(maven) # harness/sdks/java (brings a JDK too)
command -v git >/dev/null 2>&1 || need+=(git)     # scripts/try-as-user.sh clones the checkout
command -v qemu-s390x >/dev/null 2>&1 || need+=(qemu-user) # make check-bigendian: core and api on a big-endian machine
if ((${#need[@]})); then
  echo "ci-setup: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# sha256sum (coreutils): make dist.
for tool in git go node npm python3 cargo java mvn sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || { echo "ci-setup: $tool is required but not installed" >&2; exit 1; }
done
echo "ci-setup: ok ($(go version | cut -d' ' -f3), node $(node --version), $(python3 --version))" >&2
