#!/bin/sh
# Joins the HTML report's script files into one, in the order given, in
# one function scope:
#   (function () {
#   'use strict';
#   /* --- FILE --- */ ... each FILE ...
#   })();
# so that the files share their functions and variables and the page's
# global scope gets none of them.
#   scripts/join.sh OUT.js FILE...
# Written under a temporary name and renamed, as embed.sh does.
set -eu

out=$1
shift
tmp=$out.tmp
{
	echo "(function () {"
	echo "'use strict';"
	for f in "$@"; do
		echo "/* --- $f --- */"
		cat "$f"
	done
	echo "})();"
} > "$tmp"
mv "$tmp" "$out"
