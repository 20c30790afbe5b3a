#!/bin/sh
# Writes heapprof's man pages and shell completions from the built binary's
# --help texts, so that they say what that binary says:
#   scripts/gendocs.sh BIN OUTDIR
# makes OUTDIR/man/heapprof.1 and one heapprof-CMD.1 per command that
# `BIN --help` lists, OUTDIR/completion/heapprof (bash) and _heapprof (zsh).
# Needs only sh and awk (scripts/helpdoc.awk does the reading and writing).
set -eu

bin=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
help=$out/help

rm -rf "$out/man" "$out/completion" "$help"
mkdir -p "$out/man" "$out/completion" "$help"

"$bin" --help >"$help/top.txt"
version=$("$bin" --version)
version=${version#heapprof }
# The commands: the lines under "commands:" indented by two spaces.
cmds=$(awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' \
	"$help/top.txt")
if [ -z "$cmds" ]; then
	echo "heapprof: $bin --help lists no commands" >&2
	exit 1
fi
files=""
for c in $cmds; do
	"$bin" "$c" --help >"$help/$c.txt"
	files="$files $help/$c.txt"
done

# shellcheck disable=SC2086
awk -f "$here/helpdoc.awk" -v mode=man -v version="$version" -v out="$out/man" \
	"$help/top.txt" $files
# shellcheck disable=SC2086
awk -f "$here/helpdoc.awk" -v mode=bash "$help/top.txt" $files >"$out/completion/heapprof"
# shellcheck disable=SC2086
awk -f "$here/helpdoc.awk" -v mode=zsh "$help/top.txt" $files >"$out/completion/_heapprof"
