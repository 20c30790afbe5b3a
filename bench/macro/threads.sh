#!/usr/bin/env bash
#
# bench/macro/threads.sh BUILD_DIR
#
# The thread table: bench/macro/churn's operations split over 1, 2, 4 and 8
# threads, bare and under heapprof (full with DWARF stacks, full with frame
# pointers on churn-fp, sampled at 512 KiB), in paired runs: each round
# runs every mode once, one after another, so that noise on the machine
# spreads over all of them; the median of the rounds is kept. CPU time is
# the process's user + system time (bench/macro/measure), wall its
# elapsed time. A ratio is against bare glibc on the same thread count
# (churn-fp bare for fp); "/1T" divides it by the same mode's ratio on one
# thread: 1.00 when many threads cost what one does.
#
#   THREADS_OPS=4000000   operations in all, split over the threads
#   THREADS_REPS=5        rounds
#   THREADS_LIST="1 2 4 8"
#
# On a machine with fewer cores than threads, the threads take turns: the
# CPU ratios still show what the recorder adds an operation (locked
# instructions, lines moving between cores), the wall ratios mostly the
# cores' count.

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
ops=${THREADS_OPS:-4000000}
reps=${THREADS_REPS:-5}
read -r -a counts <<<"${THREADS_LIST:-1 2 4 8}"
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { printf 'threads: %s\n' "$*" >&2; }

if [[ ! -f $lib ]]; then
	log "$lib missing: no thread table (make first)"
	exit 0
fi
c_flags=(-std=c11 -O2 -g -Wall -Wextra -pthread)
"$cc" -std=c11 -O2 -Wall -Wextra -o "$bench_dir/measure" "$script_dir/measure.c"
"$cc" "${c_flags[@]}" -o "$bench_dir/churn" "$script_dir/churn.c"
"$cc" "${c_flags[@]}" -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-o "$bench_dir/churn-fp" "$script_dir/churn.c"

modes=(bare bare-fp dwarf fp sampled)
hp_env=(HEAPPROF_OUTPUT="$tmp/out.hpf" HEAPPROF_QUIET=1)

# "cpu wall" of one run of MODE on THREADS threads.
run_once() { # MODE THREADS
	local cmd
	case $1 in
	bare) cmd=("$bench_dir/churn") ;;
	bare-fp) cmd=("$bench_dir/churn-fp") ;;
	dwarf) cmd=(env LD_PRELOAD="$lib" "${hp_env[@]}" "$bench_dir/churn") ;;
	fp) cmd=(env LD_PRELOAD="$lib" HEAPPROF_UNWIND=fp "${hp_env[@]}" "$bench_dir/churn-fp") ;;
	sampled) cmd=(env LD_PRELOAD="$lib" HEAPPROF_SAMPLE_RATE=524288 "${hp_env[@]}"
		"$bench_dir/churn") ;;
	esac
	"$bench_dir/measure" -o "$tmp/m" -- "${cmd[@]}" "$2" "$ops" >/dev/null
	sed 's/.*wall_s=\([0-9.]*\) cpu_s=\([0-9.]*\).*/\2 \1/' "$tmp/m"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

log "churn, $ops operations split over ${counts[*]} threads, $reps paired rounds ($(nproc) cores)"
printf '%-8s %9s %9s  %-21s %-21s %-21s\n' threads "bare cpu" "bare wall" \
	"full DWARF cpu (/1T)" "full fp cpu (/1T)" "sampled cpu (/1T)"
declare -A one=()
for n in "${counts[@]}"; do
	declare -A cpu=() wall=()
	for ((r = 0; r < reps; r++)); do
		for m in "${modes[@]}"; do
			read -r c w < <(run_once "$m" "$n")
			cpu[$m]+="$c "
			wall[$m]+="$w "
		done
	done
	declare -A med=() medw=()
	for m in "${modes[@]}"; do
		med[$m]=$(echo "${cpu[$m]}" | median)
		medw[$m]=$(echo "${wall[$m]}" | median)
	done
	line=$(printf '%-8s %8.3fs %8.3fs ' "$n" "${med[bare]}" "${medw[bare]}")
	for m in dwarf fp sampled; do
		base=${med[bare]}
		[[ $m == fp ]] && base=${med[bare-fp]}
		ratio=$(awk -v a="${med[$m]}" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
		[[ $n == "${counts[0]}" ]] && one[$m]=$ratio
		rel=$(awk -v a="$ratio" -v b="${one[$m]}" 'BEGIN {printf "%.2f", a / b}')
		line+=$(printf ' %-21s' "${ratio}x (${rel})")
	done
	echo "$line"
	unset cpu wall med medw
done
