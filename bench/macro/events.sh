#!/usr/bin/env bash
#
# bench/macro/events.sh BUILD_DIR
#
# What the event log (heapprof run --events) costs on bench/macro/churn
# (1 thread), against the full recording without it:
#
#   - CPU: user+sys of the process (bench/macro/measure), full recording
#     and full recording with --events run alternately, EVENTS_ROUNDS
#     pairs (default 12: a pair's ratio moves by 0.3x and more with the
#     machine's load); the median of the per-pair ratios, and the medians
#     of each (target: <= 1.3x).
#   - bytes per event: the EVENTS records' stored bytes (frames included)
#     over the events they hold (2 per operation), read back by
#     `heapprof inspect --records` style counting from the capture: the
#     capture with --events minus the capture without, over the events
#     (target: <= 4).
#   - instructions per malloc+free pair (cachegrind, as ipp.sh counts
#     them: the difference of two run lengths), with and without.
#
#   EVENTS_OPS=2000000 EVENTS_ROUNDS=12 IPP_OPS_LO=100000 IPP_OPS_HI=300000
#
# HEAPPROF_TIMESERIES_MS=0 HEAPPROF_TIMELINE_MS=0 for the instruction
# counts only (so that they do not depend on how long valgrind takes).

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
ops=${EVENTS_OPS:-2000000}
rounds=${EVENTS_ROUNDS:-12}
lo=${IPP_OPS_LO:-100000}
hi=${IPP_OPS_HI:-300000}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { printf 'events: %s\n' "$*" >&2; }

if [[ ! -f $lib ]]; then
	log "$lib missing (make first)"
	exit 0
fi
"$cc" -std=c11 -O2 -g -Wall -Wextra -pthread -o "$bench_dir/churn" "$script_dir/churn.c"
"$cc" -std=c11 -O2 -Wall -Wextra -o "$bench_dir/measure" "$script_dir/measure.c"

# CPU seconds of one recorded run of churn; $1: 0 or 1 (--events).
cpu() {
	"$bench_dir/measure" -o "$tmp/m" -- env LD_PRELOAD="$lib" HEAPPROF_OUTPUT="$tmp/e$1.hpf" \
		HEAPPROF_QUIET=1 HEAPPROF_EVENTS="$1" "$bench_dir/churn" 1 "$ops" >/dev/null
	sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p' "$tmp/m"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

log "churn, $ops operations, $rounds alternating pairs: full recording, then with --events"
: >"$tmp/ratios"
: >"$tmp/base"
: >"$tmp/ev"
for ((i = 0; i < rounds; i++)); do
	if ((i % 2)); then
		e=$(cpu 1)
		b=$(cpu 0)
	else
		b=$(cpu 0)
		e=$(cpu 1)
	fi
	echo "$b" >>"$tmp/base"
	echo "$e" >>"$tmp/ev"
	awk -v b="$b" -v e="$e" 'BEGIN {printf "%.4f\n", e / b}' >>"$tmp/ratios"
done
mb=$(median <"$tmp/base")
me=$(median <"$tmp/ev")
mr=$(median <"$tmp/ratios")
printf '%-40s %s\n' "cpu full recording (median s)" "$mb"
printf '%-40s %s\n' "cpu with --events (median s)" "$me"
printf '%-40s %sx  (target <= 1.3x; pairs: %s)\n' "cpu ratio, median of pairs" "$mr" \
	"$(tr '\n' ' ' <"$tmp/ratios")"

# Bytes an event: the EVENTS records' bytes in the capture (the difference
# with and without the log) over the events (two an operation).
b0=$(stat -c %s "$tmp/e0.hpf")
b1=$(stat -c %s "$tmp/e1.hpf")
awk -v b0="$b0" -v b1="$b1" -v n="$((2 * ops))" \
	'BEGIN {printf "%-40s %.2f  (target <= 4; %d bytes for %d events)\n", "bytes per event", (b1 - b0) / n, b1 - b0, n}'

if command -v valgrind >/dev/null; then
	instructions() { # OPS EVENTS
		env LD_PRELOAD="$lib" HEAPPROF_OUTPUT="$tmp/v.hpf" HEAPPROF_QUIET=1 HEAPPROF_EVENTS="$2" \
			HEAPPROF_TIMESERIES_MS=0 HEAPPROF_TIMELINE_MS=0 \
			valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$bench_dir/churn" 1 "$1" 2>&1 | awk '/I *refs/ {gsub(",", "", $4); print $4}'
	}
	per_pair() { # EVENTS
		local a b
		a=$(instructions "$lo" "$1")
		b=$(instructions "$hi" "$1")
		echo $(((b - a) / (hi - lo)))
	}
	p0=$(per_pair 0)
	p1=$(per_pair 1)
	printf '%-40s %s\n' "instructions/pair full recording" "$p0"
	awk -v a="$p0" -v b="$p1" 'BEGIN {printf "%-40s %d  (%+d, %.3fx)\n", "instructions/pair with --events", b, b - a, b / a}'
else
	log "valgrind not installed: no instruction counts"
fi
