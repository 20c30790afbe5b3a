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
# The examples: README.md's command lines ("    heapprof CMD ..."), each with
# the comment after it and on the lines under it, as "CMD<TAB>LINE<TAB>WHY":
# one text, in the README and the man pages.
awk '
	/^    heapprof [a-z]/ {
		line = substr($0, 5); why = ""
		if (match(line, / +# /)) { why = substr(line, RSTART + RLENGTH); line = substr(line, 1, RSTART - 1) }
		split(line, w, " ")
		n++; cmd[n] = w[2]; text[n] = line; note[n] = why; last = 1; next
	}
	last && /^     +# / { sub(/^ +# /, ""); note[n] = note[n] " " $0; next }
	{ last = 0 }
	END { for (i = 1; i <= n; i++) printf "%s\t%s\t%s\n", cmd[i], text[i], note[i] }
' "$here/../README.md" >"$help/examples.tsv"
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
	-v examples="$help/examples.tsv" "$help/top.txt" $files
# shellcheck disable=SC2086
awk -f "$here/helpdoc.awk" -v mode=bash "$help/top.txt" $files >"$out/completion/heapprof"
# shellcheck disable=SC2086
awk -f "$here/helpdoc.awk" -v mode=zsh "$help/top.txt" $files >"$out/completion/_heapprof"
