#!/usr/bin/env bash
#
# bench/macro/ipp.sh BUILD_DIR
#
# Instructions per malloc+free pair on bench/macro/churn (1 thread), for
# every mode of heapprof and for the samplers of the allocators installed,
# counted by cachegrind (valgrind --tool=cachegrind --cache-sim=no): the
# count is deterministic, where CPU time on these shared VMs without
# hardware counters is not. Each figure is the difference between two run
# lengths (IPP_OPS_LO and IPP_OPS_HI operations) divided by the difference
# in operations, so start-up and exit cancel out.
#
#   IPP_OPS_LO=100000 IPP_OPS_HI=300000   the two run lengths
#
# Rows: bare glibc; heapprof full with DWARF stacks, full with frame
# pointers (on churn-fp, against churn-fp bare), sampled at 512 KiB; bare
# and full DWARF on 2 threads (each thread's buckets its own, counted on
# credit: aggregate.c);
# heaptrack's recorder (its output written to a file, its interpreter not
# run); tcmalloc (libtcmalloc.so.4) bare and with its sampler at 512 KiB
# (TCMALLOC_SAMPLE_PARAMETER=524288); jemalloc (libjemalloc.so.2) bare and
# with its sampler at 512 KiB (MALLOC_CONF=prof:true,lg_prof_sample:19).
# A profiler's extra instructions are against the allocator it runs on.
# Whatever is not installed is skipped with a note.

set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
mkdir -p "$1/bench"
build_dir=$(cd "$1" && pwd)
bench_dir="$build_dir/bench"
lib="$build_dir/libheapprof.so"
lo=${IPP_OPS_LO:-100000}
hi=${IPP_OPS_HI:-300000}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { printf 'ipp: %s\n' "$*" >&2; }

if ! command -v valgrind >/dev/null; then
	log "valgrind not installed (apt-get install valgrind): no instruction counts"
	exit 0
fi
c_flags=(-std=c11 -O2 -g -Wall -Wextra -pthread)
"$cc" "${c_flags[@]}" -o "$bench_dir/churn" "$script_dir/churn.c"
"$cc" "${c_flags[@]}" -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-o "$bench_dir/churn-fp" "$script_dir/churn.c"

libdir=/usr/lib/x86_64-linux-gnu
tcmalloc=$libdir/libtcmalloc.so.4
jemalloc=$libdir/libjemalloc.so.2
heaptrack_preload=/usr/lib/heaptrack/libheaptrack_preload.so

# Threads churn runs on (IPP_THREADS, for the threaded rows below).
threads=1

# Instructions of one run of PROG with OPS operations, under env ARGS.
instructions() { # OPS PROG ENV...
	local ops=$1 prog=$2
	shift 2
	env "$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$prog" "$threads" "$ops" 2>&1 | awk '/I *refs/ {gsub(",", "", $4); print $4}'
}

# Instructions per pair for PROG under env ARGS; "?" if a run failed.
per_pair() { # PROG ENV...
	local a b
	a=$(instructions "$lo" "$@")
	b=$(instructions "$hi" "$@")
	if [[ -z $a || -z $b ]]; then
		echo "?"
		return
	fi
	echo $(((b - a) / (hi - lo)))
}

row() { # LABEL PER_PAIR BASELINE_LABEL BASELINE [NOTE]
	local extra="-"
	if [[ $2 != "?" && $4 != "-" && $4 != "?" ]]; then
		extra=$(printf '%+d' $(($2 - $4)))
	fi
	printf '%-34s %10s %8s  %-22s %s\n' "$1" "$2" "$extra" "$3" "${5:-}"
}

hp_env=(HEAPPROF_OUTPUT="$tmp/out.hpf" HEAPPROF_QUIET=1)
log "counting instructions per malloc+free pair on churn, $lo and $hi operations (cachegrind)"
printf '%-34s %10s %8s  %-22s %s\n' mode instr/pair extra against note
bare=$(per_pair "$bench_dir/churn")
row "bare (glibc)" "$bare" "-" "-"
bare_fp=$(per_pair "$bench_dir/churn-fp")
row "bare (glibc), churn-fp" "$bare_fp" "-" "-"
if [[ -f $lib ]]; then
	row "heapprof dwarf" "$(per_pair "$bench_dir/churn" LD_PRELOAD="$lib" "${hp_env[@]}")" \
		"bare" "$bare"
	row "heapprof fp (churn-fp)" "$(per_pair "$bench_dir/churn-fp" LD_PRELOAD="$lib" \
		HEAPPROF_UNWIND=fp "${hp_env[@]}")" "bare, churn-fp" "$bare_fp"
	row "heapprof sampled 512 KiB" "$(per_pair "$bench_dir/churn" LD_PRELOAD="$lib" \
		HEAPPROF_SAMPLE_RATE=524288 HEAPPROF_SEED=1 "${hp_env[@]}")" "bare" "$bare"
	# The same on 2 threads (cachegrind runs them one at a time): what a
	# threaded process's path adds (credit, locked instructions, births
	# a unit at a time) in instructions.
	threads=2
	bare2=$(per_pair "$bench_dir/churn")
	row "bare (glibc), 2 threads" "$bare2" "-" "-"
	row "heapprof dwarf, 2 threads" "$(per_pair "$bench_dir/churn" LD_PRELOAD="$lib" \
		"${hp_env[@]}")" "bare, 2 threads" "$bare2"
	threads=1
else
	log "$lib missing: no heapprof rows (make first)"
fi
if [[ -f $heaptrack_preload ]]; then
	n=$(per_pair "$bench_dir/churn" LD_PRELOAD="$heaptrack_preload" \
		DUMP_HEAPTRACK_OUTPUT="$tmp/heaptrack.out")
	if [[ ! -s $tmp/heaptrack.out ]]; then
		row "heaptrack (recorder only)" "-" "bare" "-" \
			"records nothing under valgrind (empty output): not counted"
	else
		row "heaptrack (recorder only)" "$n" "bare" "$bare"
	fi
else
	log "heaptrack not installed: no heaptrack row"
fi
if [[ -f $tcmalloc ]]; then
	tc=$(per_pair "$bench_dir/churn" LD_PRELOAD="$tcmalloc")
	row "tcmalloc" "$tc" "-" "-"
	row "tcmalloc sampler 512 KiB" "$(per_pair "$bench_dir/churn" LD_PRELOAD="$tcmalloc" \
		TCMALLOC_SAMPLE_PARAMETER=524288)" "tcmalloc" "$tc"
else
	log "$tcmalloc missing (libgoogle-perftools4): no tcmalloc rows"
fi
if [[ -f $jemalloc ]]; then
	je=$(per_pair "$bench_dir/churn" LD_PRELOAD="$jemalloc")
	row "jemalloc" "$je" "-" "-"
	row "jemalloc sampler 512 KiB" "$(per_pair "$bench_dir/churn" LD_PRELOAD="$jemalloc" \
		MALLOC_CONF=prof:true,lg_prof_sample:19)" "jemalloc" "$je"
else
	log "$jemalloc missing (libjemalloc2): no jemalloc rows"
fi
