#!/usr/bin/env bash
#
# bench/macro/run.sh BUILD_DIR
#
# The macro benchmark: runs whole workloads bare, under heapprof (full with
# DWARF stacks, full with frame pointers, sampled) and under heaptrack, side by
# side in one run, and prints one table of ratios against the bare run.
#
#   BUILD_DIR             holds the heapprof CLI (BUILD_DIR/heapprof); the
#                         workloads are built into BUILD_DIR/bench/
#   BENCH_REPS=3          timed runs per (workload, mode); the median is kept
#   BENCH_HEAPTRACK_REPS  timed runs under heaptrack (default BENCH_REPS); it is
#                         the slowest mode, lower it to save time
#   BENCH_WORKLOADS       the workloads to run (default all: churn1 churn1long
#                         churn2 cxx sqlite3 cc1 mstack)
#   BENCH_TIMEOUT=60      seconds one run may take before it is killed and its
#                         mode reported as timed out (a hung profiler must not
#                         hang `make bench`)
#   CC=cc CXX=c++         compilers for the workloads
#
# Runs are interleaved (bare, heapprof..., heaptrack, bare, ...) so that noise
# on the machine spreads over all modes instead of hitting one. A mode that
# fails once (heapprof not built yet, a crash) is not retried: its row shows
# the error and the run goes on. Logs of the last run of each mode stay in
# BUILD_DIR/bench/last-run/; capture files are measured, then deleted.
#
# Works from any directory: sources are found relative to this script,
# BUILD_DIR relative to the current directory. See bench/README.md for how to
# read the table.

set -euo pipefail
export LC_ALL=C # a '.' decimal point for printf and sort

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ $# -ne 1 ]]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
mkdir -p "$1/bench"
build_dir=$(cd "$1" && pwd)
bench_dir="$build_dir/bench"
run_dir="$bench_dir/last-run"
heapprof="$build_dir/heapprof"

reps=${BENCH_REPS:-3}
heaptrack_reps=${BENCH_HEAPTRACK_REPS:-$reps}
run_timeout_s=${BENCH_TIMEOUT:-60}
cc=${CC:-cc}
cxx=${CXX:-c++}

sqlite_rows=200000       # INSERTs in the sqlite3 script
sqlite_rows_per_tx=50000 # so the script is 4 transactions
sample_rate_bytes=524288 # heapprof's sampled mode: one sample per 512 KiB on average
churn_capture_max_bytes=$((1024 * 1024))

churn_ops=2000000       # operations of churn 1T and 2T (the issue's 2M)
churn_long_ops=10000000 # of churn 1T 10M: bare and sampled only
cc1_lines=3000          # lines of the C file cc1 compiles

workloads=(churn1 churn1long churn2 cxx sqlite3 cc1 mstack)
# BENCH_WORKLOADS="churn1 mstack": only those (the names above)
[[ -n ${BENCH_WORKLOADS:-} ]] && read -r -a workloads <<<"$BENCH_WORKLOADS"
modes=(bare hp-dwarf hp-fp hp-sampled heaptrack)

# Whether workload $1 runs in mode $2: churn 1T 10M is there for the
# sampled target at 10M operations; cc1 has no frame-pointer build.
runs_in() { # WORKLOAD MODE
	case $1.$2 in
	churn1long.bare | churn1long.hp-sampled) return 0 ;;
	churn1long.*) return 1 ;;
	cc1.hp-fp | mstack.hp-fp) return 1 ;;
	esac
	return 0
}

# Results, keyed "workload.mode". Lists are space-separated, one value per run.
declare -A wall_list=() cpu_list=() rss_list=() error=() out_bytes=()
# Allocations made by one run of a workload, keyed by workload; '?' if unknown.
declare -A alloc_count=()

start_s=$SECONDS

# The timeout(1) process of the run in progress, if any (see run_once).
running_pid=""

# On ^C or TERM, stop the run in progress (timeout passes the signal on to
# the whole run) instead of leaving it behind.
on_interrupt() {
	if [[ -n $running_pid ]]; then
		kill -TERM "$running_pid" 2>/dev/null || true
		wait "$running_pid" 2>/dev/null || true
	fi
	echo "bench: interrupted" >&2
	exit 130
}
trap on_interrupt INT TERM

log() { printf 'bench: %s\n' "$*" >&2; }

# ---------------------------------------------------------------------------
# Building the workloads

build_workloads() {
	local c_flags=(-std=c11 -O2 -g -Wall -Wextra -pthread)
	local cxx_flags=(-std=c++17 -O2 -g -Wall -Wextra)
	# Always rebuilt: it takes seconds, and stale flags would be a silent lie.
	log "building workloads into $bench_dir"
	"$cc" -std=c11 -O2 -Wall -Wextra -o "$bench_dir/measure" "$script_dir/measure.c"
	"$cc" "${c_flags[@]}" -o "$bench_dir/churn" "$script_dir/churn.c"
	"$cc" "${c_flags[@]}" -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-o "$bench_dir/churn-fp" "$script_dir/churn.c"
	"$cxx" "${cxx_flags[@]}" -o "$bench_dir/cxx_churn" "$script_dir/cxx_churn.cpp"
	"$cxx" "${cxx_flags[@]}" -DBENCH_COUNT_NEW -o "$bench_dir/cxx_churn-count" \
		"$script_dir/cxx_churn.cpp"
	"$cc" "${c_flags[@]}" -o "$bench_dir/manystacks" "$script_dir/../analyzer/manystacks.c"
}

# Writes the sqlite3 workload: a table with an index, $sqlite_rows INSERTs in a
# few transactions. User names follow a permutation of the row numbers, so the
# index is filled in random order, as real keys would be.
generate_sqlite_script() {
	local script="$bench_dir/sqlite-inserts.sql"
	awk -v rows="$sqlite_rows" -v per_tx="$sqlite_rows_per_tx" 'BEGIN {
		print "CREATE TABLE events (id INTEGER PRIMARY KEY, user TEXT, kind INTEGER);"
		print "CREATE INDEX events_by_user ON events (user);"
		for (i = 1; i <= rows; i++) {
			if ((i - 1) % per_tx == 0)
				print "BEGIN;"
			printf "INSERT INTO events VALUES (%d, %cu%d%c, %d);\n", i, 39, (i * 7919) % rows, 39, i % 17
			if (i % per_tx == 0 || i == rows)
				print "COMMIT;"
		}
	}' >"$script.tmp"
	mv "$script.tmp" "$script"
}

# Writes the cc1 workload: $cc1_lines lines of C (structs, loops, switches,
# string tables) that cc1 compiles at -O2, as a compiler's allocations go.
generate_cc1_source() {
	awk -v lines="$cc1_lines" 'BEGIN {
		print "struct node { struct node *next; int key; double weight; const char *name; };"
		n = 1
		for (f = 0; n < lines; f++) {
			n += 16
			printf "static const char *names_%d[] = { \"a%d\", \"b%d\", \"c%d\", \"d%d\" };\n", f, f, f, f, f
			printf "static int helper_%d(int x) { return x * %d + names_%d[x & 3][0]; }\n", f, f % 9 + 2, f
			printf "int work_%d(struct node *list, int limit)\n{\n\tint total = 0;\n", f
			printf "\tfor (struct node *p = list; p && limit-- > 0; p = p->next) {\n"
			printf "\t\tswitch (p->key %% 5) {\n"
			for (c = 0; c < 4; c++)
				printf "\t\tcase %d: total += (int)(p->weight * %d) + helper_%d(p->key); break;\n", c, c + f, f
			printf "\t\tdefault: total ^= p->key << %d; break;\n\t\t}\n\t}\n", f % 7
			printf "\treturn total;\n}\n"
		}
	}' >"$bench_dir/cc1-input.c.tmp"
	mv "$bench_dir/cc1-input.c.tmp" "$bench_dir/cc1-input.c"
}

# ---------------------------------------------------------------------------
# Describing workloads and modes

workload_label() {
	case $1 in
	churn1) echo "churn 1T" ;;
	churn1long) echo "churn 1T 10M" ;;
	churn2) echo "churn 2T" ;;
	cc1) echo "cc1" ;;
	cxx) echo "cxx_churn" ;;
	mstack) echo "1M stacks" ;;
	sqlite3) echo "sqlite3" ;;
	esac
}

mode_label() { # WORKLOAD MODE
	case $2 in
	bare) echo "bare" ;;
	hp-dwarf) echo "heapprof dwarf" ;;
	hp-fp) if [[ $1 == churn* ]]; then echo "heapprof fp (churn-fp)"; else echo "heapprof fp"; fi ;;
	hp-sampled) echo "heapprof sampled" ;;
	heaptrack) echo "heaptrack" ;;
	esac
}

# Sets cmd=(...) to the command line of workload $1 in mode $2 (without the profiler).
workload_cmd() {
	local binary_suffix=""
	# In frame-pointer mode churn runs as built with frame pointers: the
	# point of that mode is what a program built for it costs.
	[[ $2 == hp-fp ]] && binary_suffix="-fp"
	case $1 in
	churn1) cmd=("$bench_dir/churn$binary_suffix" 1 "$churn_ops") ;;
	churn1long) cmd=("$bench_dir/churn" 1 "$churn_long_ops") ;;
	churn2) cmd=("$bench_dir/churn$binary_suffix" 2 "$churn_ops") ;;
	cxx) cmd=("$bench_dir/cxx_churn") ;;
	cc1) cmd=("$cc1" -quiet -O2 "$bench_dir/cc1-input.c" -o /dev/null) ;;
	mstack) cmd=("$bench_dir/manystacks" 10) ;; # 2^20 stacks, a block each
	sqlite3)
		# -init /dev/null: ignore any ~/.sqliterc.
		cmd=(sqlite3 -batch -init /dev/null "$run_dir/sqlite.db"
			".read \"$bench_dir/sqlite-inserts.sql\"")
		;;
	esac
}

# Sets prefix=(...) to the profiler command for mode $1 writing to file $2.
mode_prefix() {
	case $1 in
	bare) prefix=() ;;
	# heapprof run with its defaults: the symbols are embedded when the
	# program ends (from the symbol cache after the first run, as a user
	# running the same program again gets them), and that counts.
	hp-dwarf) prefix=("$heapprof" run -o "$2" --) ;;
	hp-fp) prefix=("$heapprof" run --unwind=fp -o "$2" --) ;;
	hp-sampled) prefix=("$heapprof" run --sample-rate "$sample_rate_bytes" -o "$2" --) ;;
	heaptrack) prefix=(heaptrack -o "$2") ;;
	esac
}

# The largest x_bare (CPU) heapprof should reach in mode $2 on workload $1,
# or nothing (issue 15's targets). churn 2T full DWARF: 1.15 times churn
# 1T's ratio, computed from this run ($3: churn 1T's DWARF ratio).
target_ratio() { # WORKLOAD MODE [CHURN1_DWARF_RATIO]
	case $2.$1 in
	hp-sampled.mstack) ;; # 0.15 s bare: start-up is most of it
	hp-sampled.churn1long | hp-sampled.cc1) echo 1.03 ;;
	hp-sampled.*) echo 1.05 ;;
	hp-dwarf.churn1) echo 2.5 ;;
	hp-dwarf.churn2) [[ -n ${3:-} && $3 != "?" ]] && awk -v r="$3" 'BEGIN { printf "%.2f", r * 1.15 }' ;;
	hp-fp.churn1) echo 1.7 ;;
	hp-dwarf.cxx | hp-fp.cxx) echo 2.5 ;;
	hp-dwarf.sqlite3) echo 1.6 ;;
	hp-dwarf.mstack) echo 3 ;; # issue 25
	esac
}

# ---------------------------------------------------------------------------
# Running

# Prints the median of its numeric arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Prints the last meaningful line of log file $1 (preferring heapprof's own), shortened.
last_error_line() {
	local line
	line=$(grep -a 'heapprof' "$1" | tail -n 1 || true)
	[[ -n $line ]] || line=$(grep -av '^[[:space:]]*$' "$1" | tail -n 1 || true)
	[[ -n $line ]] || line="no message"
	printf '%s' "${line:0:70}"
}

# Prints the allocation count from heapprof's last line in log $1,
# "heapprof: wrote OUT: N allocations, ...", or nothing if it is not there.
heapprof_alloc_count() {
	local log_file=$1 capture=$2 line rest
	line=$(grep -a 'wrote ' "$log_file" | tail -n 1 || true)
	[[ -n $line ]] || return 0
	rest=${line#*"wrote $capture: "}
	if [[ $rest == "$line" ]]; then
		# Not the path we passed (relative, quoted...): take what follows "wrote <file>: ".
		[[ $line =~ wrote\ [^\ ]+:\ (.*)$ ]] || return 0
		rest=${BASH_REMATCH[1]}
	fi
	[[ $rest =~ ^([0-9][0-9,]*) ]] || return 0
	printf '%s' "${BASH_REMATCH[1]//,/}"
}

# Runs workload $1 bare once with BENCH_REPORT=1 to learn its allocation count
# (also a warm-up). sqlite3 cannot report: its count comes from heapprof later.
count_allocations() {
	local w=$1 log_file="$run_dir/$1.count.stderr"
	alloc_count[$w]="?"
	case $w in
	churn1) cmd=("$bench_dir/churn" 1 "$churn_ops") ;;
	churn1long) cmd=("$bench_dir/churn" 1 "$churn_long_ops") ;;
	churn2) cmd=("$bench_dir/churn" 2 "$churn_ops") ;;
	cxx) cmd=("$bench_dir/cxx_churn-count") ;;
	*) return 0 ;;
	esac
	if BENCH_REPORT=1 "${cmd[@]}" >/dev/null 2>"$log_file" </dev/null; then
		local n
		n=$(sed -n 's/^allocations: \([0-9][0-9]*\)$/\1/p' "$log_file" | tail -n 1)
		[[ -n $n ]] && alloc_count[$w]=$n
	fi
	return 0
}

# Runs workload $1 in mode $2 once, under measure, and records the result or the error.
run_once() {
	local w=$1 mode=$2 key="$1.$2"
	local capture="$run_dir/$key.capture" log_file="$run_dir/$key.stderr"
	local result_file="$run_dir/$key.measure"

	rm -f "$capture" "$capture".* "$result_file"
	[[ $w == sqlite3 ]] && rm -f "$run_dir/sqlite.db" "$run_dir/sqlite.db"-*
	workload_cmd "$w" "$mode"
	mode_prefix "$mode" "$capture"

	# timeout(1) runs measure in a process group of its own and kills all of it,
	# profiler helpers included. measure writes its result only once the
	# command is over, so a missing result means timeout struck. Being in its
	# own group, it does not see the terminal's ^C: it runs in the background
	# so that on_interrupt can pass the signal on.
	local status=0
	timeout --kill-after=5 "$run_timeout_s" \
		"$bench_dir/measure" -o "$result_file" -- "${prefix[@]}" "${cmd[@]}" \
		>/dev/null 2>"$log_file" </dev/null &
	running_pid=$!
	wait "$running_pid" || status=$?
	running_pid=""
	if [[ ! -s $result_file ]] && ((status == 124 || status == 137)); then
		error[$key]="timed out after $run_timeout_s s"
		return 0
	fi
	if ((status != 0)); then
		error[$key]="exit $status: $(last_error_line "$log_file")"
		return 0
	fi

	local wall cpu rss
	read -r wall cpu rss _ < <(sed 's/[a-z_]*=//g' "$result_file")
	wall_list[$key]+="$wall "
	cpu_list[$key]+="$cpu "
	rss_list[$key]+="$rss "

	# heaptrack appends .zst or .gz to the name it is given.
	local file
	for file in "$capture" "$capture".*; do
		if [[ -f $file ]]; then
			out_bytes[$key]=$(stat -c %s "$file")
			rm -f "$file"
		fi
	done
	if [[ $mode == hp-dwarf || $mode == hp-fp ]] && [[ ${alloc_count[$w]} == "?" ]]; then
		local n
		n=$(heapprof_alloc_count "$log_file" "$capture")
		[[ -n $n ]] && alloc_count[$w]=$n
	fi
	return 0
}

# Decides which modes can run at all, recording why the others cannot.
check_profilers() {
	local w
	if [[ ! -x $heapprof ]]; then
		for w in "${workloads[@]}"; do
			error[$w.hp-dwarf]="heapprof not found at $heapprof (run make first)"
			error[$w.hp-fp]=${error[$w.hp-dwarf]}
			error[$w.hp-sampled]=${error[$w.hp-dwarf]}
		done
	fi
	if ! command -v heaptrack >/dev/null; then
		echo "heaptrack not found: skipping it (apt-get install heaptrack)"
		modes=(bare hp-dwarf hp-fp hp-sampled)
	fi
	if ! command -v sqlite3 >/dev/null; then
		echo "sqlite3 not found: skipping that workload (apt-get install sqlite3)"
		workloads=("${workloads[@]/sqlite3/}")
	fi
	cc1=$("$cc" -print-prog-name=cc1 2>/dev/null || true)
	if [[ ! -x $cc1 ]]; then
		echo "cc1 not found ($cc -print-prog-name=cc1): skipping that workload (apt-get install gcc)"
		workloads=("${workloads[@]/cc1/}")
	fi
}

run_workload() {
	local w=$1 rep mode
	count_allocations "$w"
	for ((rep = 1; rep <= reps; rep++)); do
		log "$(workload_label "$w"): run $rep of $reps"
		for mode in "${modes[@]}"; do
			runs_in "$w" "$mode" || continue
			if [[ -n ${error[$w.$mode]:-} ]]; then
				continue # failed once, or cannot run at all
			fi
			if [[ $mode == heaptrack ]] && ((rep > heaptrack_reps)); then
				continue
			fi
			run_once "$w" "$mode"
		done
	done
}

# ---------------------------------------------------------------------------
# Reporting

format_size() { # BYTES
	awk -v b="$1" 'BEGIN {
		if (b >= 1048576 / 10) printf "%.1f MiB", b / 1048576
		else printf "%.1f KiB", b / 1024
	}'
}

# Prints "<=4x ok" or "<=4x MISS" (and the capture size check for churn) for one row.
target_check() { # WORKLOAD MODE RATIO
	local w=$1 mode=$2 ratio=$3 limit verdict
	limit=$(target_ratio "$w" "$mode" "$(cpu_ratio churn1 hp-dwarf)")
	[[ -n $limit && $ratio != "?" ]] || return 0
	verdict=$(awk -v r="$ratio" -v l="$limit" 'BEGIN { print (r <= l) ? "ok" : "MISS" }')
	printf '<=%sx %s' "$limit" "$verdict"
	if [[ $w == churn[12] && ($mode == hp-dwarf || $mode == hp-fp) && -n ${out_bytes[$w.$mode]:-} ]]; then
		((out_bytes[$w.$mode] <= churn_capture_max_bytes)) && verdict=ok || verdict=MISS
		printf ', out<=1MiB %s' "$verdict"
	fi
}

# One table row: workload, mode, then the columns print_report names.
print_columns() {
	local line
	line=$(printf '%-10s %-23s %7s %7s %7s %9s %13s %10s  %s' "$@")
	printf '%s\n' "${line%"${line##*[! ]}"}" # without trailing blanks
}

# The CPU time ratio of workload $1 in mode $2 against its bare run, "?"
# when either is missing.
# The median of the round-by-round ratios: each run of MODE against the bare
# run of the same round, seconds apart (the rounds alternate the modes).
# This VM's speed drifts by 10% and more from one minute to the next; a
# ratio of medians taken minutes apart carried that drift (two runs of the
# whole bench gave churn DWARF 2.24x and 2.62x), a paired one cancels it.
# A mode that ran fewer rounds (heaptrack) pairs with the first bare runs.
cpu_ratio() { # WORKLOAD MODE
	if [[ -z ${cpu_list[$1.$2]:-} || -z ${cpu_list[$1.bare]:-} ]]; then
		echo "?"
		return
	fi
	local -a t b ratios=()
	local i
	read -ra t <<<"${cpu_list[$1.$2]}"
	read -ra b <<<"${cpu_list[$1.bare]}"
	for ((i = 0; i < ${#t[@]} && i < ${#b[@]}; i++)); do
		ratios+=("$(awk -v t="${t[i]}" -v b="${b[i]}" 'BEGIN { printf "%.6f", (b > 0 ? t / b : 0) }')")
	done
	awk -v r="$(median "${ratios[@]}")" 'BEGIN { printf "%.2f", r }'
}

print_row() { # WORKLOAD MODE
	local w=$1 mode=$2 key="$1.$2"
	local label mlabel
	label=$(workload_label "$w")
	mlabel=$(mode_label "$w" "$mode")
	if [[ -n ${error[$key]:-} ]]; then
		printf '%-10s %-23s error: %s\n' "$label" "$mlabel" "${error[$key]}"
		return
	fi
	[[ -n ${wall_list[$key]:-} ]] || return 0

	local wall cpu rss_mib ratio ns="-" out="-" bare_cpu=""
	# shellcheck disable=SC2086 # the lists are meant to split into arguments
	wall=$(median ${wall_list[$key]})
	# shellcheck disable=SC2086
	cpu=$(median ${cpu_list[$key]})
	# shellcheck disable=SC2086
	rss_mib=$(awk -v k="$(median ${rss_list[$key]})" 'BEGIN { printf "%.1f", k / 1024 }')
	ratio=$(cpu_ratio "$w" "$mode")
	# shellcheck disable=SC2086
	[[ -n ${cpu_list[$w.bare]:-} ]] && bare_cpu=$(median ${cpu_list[$w.bare]})
	if [[ $mode != bare ]]; then
		ns="?"
		if [[ -n $bare_cpu && ${alloc_count[$w]} != "?" ]]; then
			ns=$(awk -v t="$cpu" -v b="$bare_cpu" -v n="${alloc_count[$w]}" \
				'BEGIN { ns = (t - b) * 1e9 / n; printf "%.0f", (ns > -0.5 && ns < 0.5) ? 0 : ns }')
		fi
	fi
	[[ -n ${out_bytes[$key]:-} ]] && out=$(format_size "${out_bytes[$key]}")

	print_columns "$label" "$mlabel" "$(printf '%.2f' "$wall")" "$(printf '%.2f' "$cpu")" \
		"$ratio" "$ns" "$rss_mib" "$out" "$(target_check "$w" "$mode" "$ratio")"
}

print_report() {
	local w mode
	echo
	local heaptrack_note=""
	if [[ " ${modes[*]} " == *" heaptrack "* && $heaptrack_reps != "$reps" ]]; then
		heaptrack_note=" ($heaptrack_reps under heaptrack)"
	fi
	echo "heapprof macro benchmark: median of $reps runs$heaptrack_note, $(nproc) CPUs"
	echo
	print_columns workload mode time_s cpu_s x_bare ns/alloc peak_rss_MiB output target
	for w in "${workloads[@]}"; do
		[[ -n $w ]] || continue
		for mode in "${modes[@]}"; do
			runs_in "$w" "$mode" && print_row "$w" "$mode"
		done
		echo
	done
	cat <<-EOF
		allocations per run: churn ${alloc_count[churn1]:-?} (1T) / ${alloc_count[churn1long]:-?} (1T 10M) / ${alloc_count[churn2]:-?} (2T),
		                     cxx_churn ${alloc_count[cxx]:-?}, sqlite3 and cc1 ${alloc_count[sqlite3]:-?} / ${alloc_count[cc1]:-?} (heapprof's count),
		                     1M stacks ${alloc_count[mstack]:-?} (bench/analyzer/manystacks.c 10: 2^20 stacks, a block each)
		time_s: median wall time; cpu_s: user+sys of the process tree (heaptrack's includes
		        its interpreter and compressor; heapprof's the symbols it embeds at the end)
		x_bare: median of each round's cpu_s / that round's bare cpu_s; ns/alloc: (cpu_s - bare cpu_s) / allocations
		peak_rss_MiB: largest peak RSS in the process tree (not a sum); output: capture file size

		targets (issue 15, CPU): churn 1T (2M) full DWARF <= 2.5x, fp <= 1.7x; churn 2T DWARF
		  <= 1.15 x churn 1T's; sampled <= 1.05x at 2M, <= 1.03x at 10M and on cc1; sqlite3
		  DWARF <= 1.6x; C++ <= 2.5x; churn capture <= 1 MiB; (issue 25) 1M stacks DWARF <= 3x
	EOF
	echo "total benchmark time: $((SECONDS - start_s)) s; logs of the last runs: $run_dir"
}

# ---------------------------------------------------------------------------

main() {
	rm -rf "$run_dir"
	mkdir -p "$run_dir"
	build_workloads
	generate_sqlite_script
	generate_cc1_source
	check_profilers
	local w
	for w in "${workloads[@]}"; do
		[[ -n $w ]] && run_workload "$w"
	done
	print_report
}

main
