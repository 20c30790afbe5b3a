#!/usr/bin/env bash
# Runs every test binary under BUILD/tests (or those matching the glob
# ONLY, relative to it: 'unit/test_rec_*') and adds up their results.
#   HP_TEST_NAME=glob    run only the tests whose name matches
#   HP_TEST_PREFIX=cmd   run each test binary under cmd (e.g. "gdb --args")
# A selection that runs no test (ONLY matches no binary, or HP_TEST_NAME no
# test of those run) fails: a misspelt name must not read as a pass.
set -u
build=${1:-build}
only=${2:-*}
export HP_BUILD=$build
# heapprof's symbol cache (docs/options.md): the tests' own, never the
# user's; shared by every test, so the suite also runs on cache hits.
# Through XDG_CACHE_HOME: the recorder hides HEAPPROF_ variables from the
# programs it records, which tests compare with their bare environment.
unset HEAPPROF_CACHE_DIR
export XDG_CACHE_HOME="$build/tmp/cache"
passed=0 failed=0 binaries=0
for t in "$build"/tests/unit/* "$build"/tests/integration/* "$build"/tests/fault/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case "$t" in *.d|*.o) continue ;; esac
	# shellcheck disable=SC2254
	case "${t#"$build"/tests/}" in $only) ;; *) continue ;; esac
	echo "== ${t#"$build"/tests/}"
	binaries=$((binaries + 1))
	out=$(${HP_TEST_PREFIX:-} "$t" 2>&1)
	status=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL ${t##*/}: exited $status without a summary"
		failed=$((failed + 1))
		continue
	fi
	p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL ${t##*/}: exited $status"
		failed=$((failed + 1))
	fi
done
if [ "$binaries" -eq 0 ]; then
	echo "FAIL: no test binary under $build/tests matches '$only' (names such as" \
		"'integration/test_cli', 'unit/test_rec_*'; build them with make tests)"
	failed=$((failed + 1))
elif [ $((passed + failed)) -eq 0 ]; then
	echo "FAIL: HP_TEST_NAME='${HP_TEST_NAME:-}' selects no test of the $binaries binaries" \
		"run (it matches the names after 'ok' and 'FAIL', e.g. 'serve_*'; a binary is" \
		"chosen by run.sh's second argument: bash tests/run.sh $build 'integration/test_cli')"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
