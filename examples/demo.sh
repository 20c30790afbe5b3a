#!/usr/bin/env bash
# make demo: build examples/example.c, run it under heapprof, print the report.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/examples"
cc -O1 -g -fno-omit-frame-pointer -o "$build/examples/example" "$here/example.c"
out="$build/examples/example.hpf"
echo "\$ heapprof run -o $out -- $build/examples/example"
"$build/heapprof" run -o "$out" -- "$build/examples/example"
echo
echo "\$ heapprof report --top 3 $out"
"$build/heapprof" report --top 3 "$out"
echo
echo "More: heapprof flamegraph $out -o example.svg, heapprof export $out --format pprof -o example.pb.gz"
