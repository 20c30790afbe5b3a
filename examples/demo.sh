#!/usr/bin/env bash
# make demo: build examples/example.c, run it under heapprof, show the capture.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/examples"
cc -O1 -g -fno-omit-frame-pointer -o "$build/examples/example" "$here/example.c"
out="$build/examples/example.hpf"
echo "\$ heapprof run -o $out -- $build/examples/example"
"$build/heapprof" run -o "$out" -- "$build/examples/example"
echo
echo "\$ heapprof inspect $out"
"$build/heapprof" inspect "$out"
