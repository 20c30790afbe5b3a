#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD SECONDS - what `make fuzz` runs once the fuzz
# target and the seed generator are built (Makefile, "--- fuzzing ---").
#
# Makes the seeds in BUILD/fuzz/seeds (crafted by gen_seeds, real ones from
# `heapprof run` on the test programs, and real ones cut short), then runs
# BUILD/fuzz/fuzz_capture for SECONDS in one process over the scratch corpus
# BUILD/fuzz/corpus (kept between runs) with those seeds and the kept ones
# in tests/fuzz/seeds. The fuzzer's log is BUILD/fuzz/fuzz.log. An input that
# crashed, leaked, ran out of memory or timed out is copied into
# tests/fuzz/crashes/ (kept in git, replayed by tests/fault/test_fuzz_corpus)
# and the script fails, naming it.
set -u
build=$1 seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
fuzz=$build/fuzz
log=$fuzz/fuzz.log
crashes=$root/tests/fuzz/crashes
mkdir -p "$fuzz/corpus" "$fuzz/artifacts" "$crashes"
rm -rf "$fuzz/seeds" "$fuzz/artifacts"/*
mkdir -p "$fuzz/seeds"

"$fuzz/gen_seeds" "$fuzz/seeds" || exit 1
# Real captures: several recorder options, module unloads (dlopener),
# threads, several snapshots (triggers, --dump-every).
progs=$build/tests/programs
real() {
	local name=$1
	shift
	"$build/heapprof" run -q -o "$fuzz/seeds/real-$name.hpf" "$@" >/dev/null 2>&1 ||
		echo "fuzz: warning: heapprof run for seed real-$name failed" >&2
}
real known -- "$progs/known"
real known-fp --unwind fp --max-depth 8 --no-symbols -- "$progs/known"
real known-sampled --sample-rate 1K --dump-every 64K --timeseries 1 -- "$progs/known"
real dlopener -- "$progs/dlopener" "$progs/libplugin.so"
real threads --interval 1 -- "$progs/threads"
real triggers --dump-high-water 4K -- "$progs/triggers"
# Cut short: in the header, in the first frame, in the middle, at the end.
if [ -s "$fuzz/seeds/real-known.hpf" ]; then
	size=$(stat -c %s "$fuzz/seeds/real-known.hpf")
	for n in 20 40 $((size / 2)) $((size - 1)); do
		head -c "$n" "$fuzz/seeds/real-known.hpf" >"$fuzz/seeds/cut-$n.hpf"
	done
fi

echo "fuzz: $fuzz/fuzz_capture for ${seconds} s (log: $log)"
# The kept crash inputs are seeds too: until they are fixed, the fuzzer
# stops on them at once, as the replay test fails on them.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
"$fuzz/fuzz_capture" -max_len=65536 -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 -dict="$root/tests/fuzz/capture.dict" \
	-artifact_prefix="$fuzz/artifacts/" \
	"$fuzz/corpus" "$fuzz/seeds" "$root/tests/fuzz/seeds" "$crashes" >"$log" 2>&1
status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1)
echo "fuzz: ${runs:-?} runs, ${rate:-?}/s, ${cov:-no coverage line}"

found=0
for f in "$fuzz/artifacts"/crash-* "$fuzz/artifacts"/leak-* "$fuzz/artifacts"/oom-* \
	"$fuzz/artifacts"/timeout-*; do
	[ -f "$f" ] || continue
	cp "$f" "$crashes/"
	echo "fuzz: FAILED: ${f##*/} kept as tests/fuzz/crashes/${f##*/};" \
		"replay: $fuzz/fuzz_capture tests/fuzz/crashes/${f##*/}" >&2
	found=1
done
if [ "$found" -ne 0 ] || [ "$status" -ne 0 ]; then
	# The report: from the sanitizer's or libFuzzer's first error line on.
	# libFuzzer's and the sanitizers' own frames are left out.
	sed -n '/^==[0-9]*==\|^INFO: a leak\|deadly signal\|runtime error\|invariant broken\|ERROR: libFuzzer/,$p' \
		"$log" | grep -Ev ' in (fuzzer::|__sanitizer|__asan|__interceptor|__libc_start|_start )' |
		grep -Ev '^(0x[0-9a-f]+,)+$|\\[0-7]{3}.*\\[0-7]{3}|^Base64:|^MS: |^stat::' | head -n 40 >&2
	echo "fuzz: FAILED (fuzzer exit status $status); full log: $log" >&2
	exit 1
fi
