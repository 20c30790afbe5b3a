#!/usr/bin/env bash
# tests/fuzz/run_core.sh BUILD SECONDS - what `make fuzz-core` runs once the
# core reader's fuzz target is built (Makefile, "--- fuzzing ---").
#
# Makes the seeds in BUILD/fuzz/core-seeds: kernel cores (core_pattern must
# be 'core') of tests/programs/corereach under heapprof (the recorder's root,
# tables and live blocks), of tests/programs/coreheap without it (glibc's
# heap, C++ types) and of tests/programs/overflow with and without it (a
# damaged heap: the walk past the damage, --damage; damaged free lists),
# then runs BUILD/fuzz/fuzz_core for SECONDS in one
# process over the scratch corpus BUILD/fuzz/core-corpus (kept between
# runs). The log is BUILD/fuzz/fuzz-core.log. An input that crashed, leaked,
# ran out of memory or timed out is copied into tests/fuzz/crashes-core/ and
# the script fails, naming it.
set -u
build=$(cd "$1" && pwd) seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fuzz=$build/fuzz
log=$fuzz/fuzz-core.log
seeds=$fuzz/core-seeds
crashes=$root/tests/fuzz/crashes-core
mkdir -p "$fuzz/core-corpus" "$fuzz/core-artifacts" "$crashes"
rm -rf "$seeds" "$fuzz/core-artifacts"/*
mkdir -p "$seeds"

if ! grep -qx core /proc/sys/kernel/core_pattern; then
	echo "fuzz-core: /proc/sys/kernel/core_pattern is not 'core': no seed cores" >&2
	exit 1
fi
progs=$build/tests/programs
(cd "$seeds" && LD_PRELOAD=$build/libheapprof.so HEAPPROF_OUTPUT=/dev/null \
	"$progs/corereach" >/dev/null 2>&1; set -- core*; [ -f "$1" ] && mv "$1" rec.core)
(cd "$seeds" && "$progs/coreheap" abort >/dev/null 2>&1; set -- core*; [ -f "$1" ] && mv "$1" heap.core)
# a damaged heap: a chunk header overrun, then glibc's abort in free()
(cd "$seeds" && "$progs/overflow" abort >/dev/null 2>&1; set -- core*; [ -f "$1" ] && mv "$1" damaged.core)
(cd "$seeds" && LD_PRELOAD=$build/libheapprof.so HEAPPROF_OUTPUT=/dev/null \
	"$progs/overflow" abort >/dev/null 2>&1; set -- core*; [ -f "$1" ] && mv "$1" damaged-rec.core)
# damaged free lists: a tcache link zeroed (the bin's count against its
# list), a link to a chunk of another size, a fastbin double free (a loop)
for mode in uafzero uafsize double; do
	(cd "$seeds" && "$progs/overflow" $mode >/dev/null 2>&1; set -- core*; [ -f "$1" ] &&
		mv "$1" "lists-$mode.core")
done
ls "$seeds"/rec.core "$seeds"/heap.core "$seeds"/damaged.core "$seeds"/damaged-rec.core \
	"$seeds"/lists-uafzero.core "$seeds"/lists-uafsize.core "$seeds"/lists-double.core \
	>/dev/null || exit 1
max=$(stat -c %s "$seeds"/*.core | sort -n | tail -n 1)

echo "fuzz-core: $fuzz/fuzz_core for ${seconds} s (log: $log)"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# A unit is a whole core (up to 10 MB under the recorder) read by every
# view of its capture under ASan and UBSan: the recorder's seed core takes
# 18 s so on this 2-core machine with a load of 10 (0.3 s for a plain
# `heapprof core`). A hang is a unit over 60 s; slower units below it are
# not artifacts (libFuzzer's default of 10 s wrote the seeds themselves out
# as "slow units", and the run failed on them).
"$fuzz/fuzz_core" -max_len="$max" -max_total_time="$seconds" -timeout=60 -report_slow_units=60 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$fuzz/core-artifacts/" \
	"$fuzz/core-corpus" "$seeds" "$crashes" >"$log" 2>&1
status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1)
echo "fuzz-core: ${runs:-?} runs, ${rate:-?}/s, ${cov:-no coverage line}"
found=0
for f in "$fuzz/core-artifacts"/*; do
	[ -f "$f" ] || continue
	cp "$f" "$crashes/" && echo "fuzz-core: found $crashes/$(basename "$f")" >&2
	found=1
done
if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
	echo "fuzz-core: failed (status $status); see $log" >&2
	exit 1
fi
