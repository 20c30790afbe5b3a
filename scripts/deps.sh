#!/usr/bin/env bash
# Installs what heapprof needs to build and test, from Debian's packages.
# As root it runs apt-get; otherwise it says exactly what to install.
#   scripts/deps.sh          build and test dependencies
#   scripts/deps.sh --bench  also the profilers and programs `make bench` compares
set -euo pipefail

build_pkgs="gcc g++ make pkg-config libunwind-dev libdw-dev libelf-dev libzstd-dev zlib1g-dev"
# The real readers of heapprof's outputs, which the tests run: go tool
# pprof, gperftools' pprof (google-pprof), headless Chromium; clang for the
# capture reader's fuzz target.
test_pkgs="binutils coreutils time python3 golang-go google-perftools chromium clang libclang-rt-14-dev"
bench_pkgs="heaptrack sqlite3"

pkgs="$build_pkgs $test_pkgs"
if [ "${1:-}" = "--bench" ]; then
	pkgs="$pkgs $bench_pkgs"
fi

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "heapprof: missing packages:$missing" >&2
	echo "heapprof: install them with: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "heapprof: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
