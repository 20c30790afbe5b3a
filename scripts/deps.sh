#!/usr/bin/env bash
# Installs what a make target needs, from Debian's packages. As root it runs
# apt-get; otherwise it says exactly what to install and fails.
#   scripts/deps.sh build   make, make install, make demo, make deb: the compiler
#                           and the libraries heapprof links
#   scripts/deps.sh test    make check: also the real readers the tests run
#   scripts/deps.sh fuzz    make fuzz: also clang with libFuzzer
#   scripts/deps.sh bench   make bench: also the profilers and programs it compares
# Only `test`, `fuzz` and `bench` bring in Go, Chromium, clang and the other
# test tools (~0.9 GiB): building and installing heapprof needs none of them.
set -euo pipefail

build_pkgs="gcc g++ make pkg-config libunwind-dev libdw-dev libelf-dev libiberty-dev libzstd-dev zlib1g-dev"
# The real readers of heapprof's outputs, which the tests run: go tool
# pprof, gperftools' pprof (google-pprof), headless Chromium; GNU time for
# the peak RSS of heapprof itself (the memory bound test); groff for the man
# pages, bash and zsh for the completions, dpkg for the package; clang for
# the capture reader's fuzz target (make check runs it in CI); valgrind,
# whose in-use-at-exit figures the exit tests agree with; rustc for the Rust
# programs whose legacy and v0 symbol names the tests demangle; curl and
# Prometheus' Python client (its text parser) for the live endpoints; gdb for
# gcore (heapprof core on a running program, and on any machine whose
# core_pattern pipes cores away), libc6-dbg for glibc's main_arena and mp_
# symbols (the tests check that the signature heuristic finds the same
# main_arena as the symbol); jemalloc, tcmalloc (minimal and full) and
# mimalloc, and Debian's redis-server (linked with libjemalloc) with
# redis-tools' redis-benchmark and redis-cli, for heapprof attach on
# programs whose allocator is not glibc's.
fuzz_pkgs="clang libclang-rt-14-dev"
attach_pkgs="libjemalloc2 libtcmalloc-minimal4 libgoogle-perftools4 libmimalloc2.0 redis-server redis-tools"
test_pkgs="binutils coreutils time python3 python3-prometheus-client curl golang-go google-perftools chromium groff-base zsh $fuzz_pkgs valgrind rustc gdb libc6-dbg $attach_pkgs"
bench_pkgs="heaptrack sqlite3 python3"

case "${1:-test}" in
build) pkgs="$build_pkgs" ;;
test) pkgs="$build_pkgs $test_pkgs" ;;
fuzz) pkgs="$build_pkgs $fuzz_pkgs" ;;
bench | --bench) pkgs="$build_pkgs $bench_pkgs" ;;
*)
	echo "usage: scripts/deps.sh build|test|fuzz|bench" >&2
	exit 2
	;;
esac

# Without dpkg (not Debian) there is nothing to ask: the compiler and
# pkg-config say what is missing.
if ! command -v dpkg-query >/dev/null 2>&1; then
	exit 0
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
