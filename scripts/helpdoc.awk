# helpdoc.awk - man pages and shell completion from heapprof's --help texts.
#
#   awk -f helpdoc.awk -v mode=man -v version=V -v out=DIR  top.txt CMD.txt...
#   awk -f helpdoc.awk -v mode=bash|zsh                      top.txt CMD.txt...
#
# top.txt is `heapprof --help`; each CMD.txt is `heapprof CMD --help`, named
# for its command. scripts/gendocs.sh runs the built binary to make them, so
# the pages and the completion say what the binary says, nothing more.
#
# The texts are read as the CLI writes them (src/cli/):
#   usage: heapprof CMD SYNOPSIS          the first line
#   prose                                 the description, until the first option
#     -o, --output FILE   description     an option: indented, starts with '-';
#                         continued       its description follows a gap of two
#                                         or more spaces, continued on lines
#                                         indented further than the option
#   prose after the options               notes
# and in top.txt, under "commands:", one line per command indented by two:
#   NAME SYNOPSIS   description (or the description alone on the next lines).
#
# Which values an option takes is read from its term (--at end|peak, or one
# line per value: --format pprof) or its usage (--format pprof|folded); the
# table in vocab() names the values help describes in prose, and each is
# offered only while the option's own description still names it.

function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
function indent(s) { match(s, /^ */); return RLENGTH }

# --- reading --------------------------------------------------------------

FNR == 1 {
	file = FILENAME
	sub(/.*\//, "", file)
	sub(/\.txt$/, "", file)
	in_cmds = 0
	cur = file
	if (file != "top") {
		ncmd_pages++
		page[ncmd_pages] = file
		nopt[cur] = 0
		desc[cur] = ""
		notes[cur] = ""
		last = ""
	}
}

file == "top" {
	if ($0 ~ /^usage: /) { top_usage = substr($0, 8); next }
	if ($0 ~ /^commands:/) { in_cmds = 1; next }
	if ($0 == "") { if (in_cmds) in_cmds = 2; next }
	if (in_cmds == 1 && indent($0) == 2) {
		line = substr($0, 3)
		name = line; sub(/ .*/, "", name)
		ncmds++
		cmds[ncmds] = name
		if (match(line, /  +/)) {
			cmd_syn[name] = substr(line, 1, RSTART - 1)
			cmd_desc[name] = trim(substr(line, RSTART))
		} else {
			cmd_syn[name] = line
			cmd_desc[name] = ""
		}
		last_cmd = name
		next
	}
	if (in_cmds == 1 && indent($0) > 2) {
		cmd_desc[last_cmd] = trim(cmd_desc[last_cmd] " " trim($0))
		next
	}
	top_notes = top_notes $0 "\n"
	next
}

{
	if ($0 ~ /^usage: /) { usage[cur] = substr($0, 8); next }
	if ($0 == "") {
		if (nopt[cur] == 0) desc[cur] = desc[cur] "\n"
		else if (notes[cur] != "") notes[cur] = notes[cur] "\n"
		last = "blank"
		next
	}
	if ($0 ~ /^ +-/) {
		n = ++nopt[cur]
		opt_ind[cur, n] = indent($0)
		line = trim($0)
		if (match(line, /  +/)) {
			opt_term[cur, n] = substr(line, 1, RSTART - 1)
			opt_desc[cur, n] = trim(substr(line, RSTART))
		} else {
			opt_term[cur, n] = line
			opt_desc[cur, n] = ""
		}
		last = "opt"
		next
	}
	if (last == "opt" && indent($0) > opt_ind[cur, nopt[cur]]) {
		n = nopt[cur]
		opt_desc[cur, n] = trim(opt_desc[cur, n] "\n" trim($0))
		next
	}
	if (nopt[cur] == 0) desc[cur] = desc[cur] trim($0) "\n"
	else notes[cur] = notes[cur] trim($0) "\n"
	last = "text"
}

# --- man pages ------------------------------------------------------------

# Text for troff: backslashes and hyphens escaped, a leading . or ' made
# harmless.
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	gsub(/\n\./, "\n\\\\\\&.", s)
	gsub(/\n'/, "\n\\\\\\&'", s)
	sub(/^[.']/, "\\\\\\&&", s)
	return s
}

# One word of a synopsis or an option term: options and literal values in
# bold, placeholders (PROGRAM, FILE, options) in italics, brackets, commas
# and ellipses in roman.
function word(w,    pre, post, core) {
	pre = ""; post = ""; core = w
	while (core ~ /^\[/) { pre = pre "["; core = substr(core, 2) }
	while (core ~ /(\]|,|\.\.\.)$/) {
		if (core ~ /\.\.\.$/) { post = "..." post; core = substr(core, 1, length(core) - 3) }
		else { post = substr(core, length(core)) post; core = substr(core, 1, length(core) - 1) }
	}
	if (core == "") return pre post
	if (core ~ /^<[a-z]+>$/) core = substr(core, 2, length(core) - 2)
	else if (core != "options" && core !~ /^[A-Z][A-Z0-9_]*(\.[a-z]+)?$/)
		return pre "\\fB" esc(core) "\\fR" post
	return pre "\\fI" esc(core) "\\fR" post
}

function words(s,    n, a, i, r) {
	n = split(s, a, / +/)
	r = ""
	for (i = 1; i <= n; i++) r = r (i > 1 ? " " : "") word(a[i])
	return r
}

# Paragraphs separated by blank lines, as .PP blocks.
function paras(s, f,    n, a, i, open) {
	n = split(s, a, /\n/)
	open = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "") { open = 0; continue }
		if (!open) { print ".PP" > f; open = 1 }
		print esc(a[i]) > f
	}
}

function th(f, title) {
	print ".\\\" Generated from `heapprof --help` by scripts/gendocs.sh; do not edit." > f
	print ".TH " toupper(title) " 1 \"\" \"heapprof " version "\" \"User Commands\"" > f
	print ".nh" > f
}

# The examples (gendocs.sh: README.md's, "CMD<TAB>LINE<TAB>WHY" lines) of
# command c, or every one for c == "", as an EXAMPLES section.
function man_examples(c, f,    line, a, n) {
	if (examples == "") return
	n = 0
	while ((getline line < examples) > 0) {
		split(line, a, "\t")
		if (c != "" && a[1] != c) continue
		if (!n++) print ".SH EXAMPLES" > f
		print ".TP" > f
		print "\\fB" esc(a[2]) "\\fR" > f
		print (a[3] != "" ? esc(a[3]) : "") > f
	}
	close(examples)
}

function man_top(    f, i, c) {
	f = out "/heapprof.1"
	th(f, "heapprof")
	print ".SH NAME" > f
	print "heapprof \\- heap profiler for native Linux programs" > f
	print ".SH SYNOPSIS" > f
	print "\\fBheapprof\\fR " words(substr(top_usage, 10)) > f
	print ".br" > f
	print "\\fBheapprof\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR" > f
	print ".SH COMMANDS" > f
	for (i = 1; i <= ncmds; i++) {
		c = cmds[i]
		print ".TP" > f
		print "\\fBheapprof\\fR " words(cmd_syn[c]) > f
		print esc(cmd_desc[c]) "; see" > f
		print ".BR heapprof\\-" esc(c) " (1)." > f
	}
	paras(top_notes, f)
	man_examples("", f)
	print ".SH SEE ALSO" > f
	for (i = 1; i <= ncmds; i++)
		print ".BR heapprof\\-" esc(cmds[i]) " (1)" (i < ncmds ? "," : "") > f
	close(f)
}

function man_cmd(c,    f, i, u) {
	f = out "/heapprof-" c ".1"
	th(f, "heapprof-" c)
	print ".SH NAME" > f
	print "heapprof\\-" esc(c) " \\- " esc(cmd_desc[c]) > f
	print ".SH SYNOPSIS" > f
	u = usage[c]
	sub(/^heapprof [^ ]+ ?/, "", u)
	print "\\fBheapprof " esc(c) "\\fR " words(u) > f
	print ".SH DESCRIPTION" > f
	paras(desc[c], f)
	if (nopt[c] > 0) {
		print ".SH OPTIONS" > f
		for (i = 1; i <= nopt[c]; i++) {
			print ".TP" > f
			print words(opt_term[c, i]) > f
			print esc(opt_desc[c, i]) > f
		}
		print ".TP" > f
		print "\\fB\\-\\-help\\fR" > f
		print "show this text and exit" > f
	}
	if (notes[c] != "") {
		print ".SH NOTES" > f
		paras(notes[c], f)
	}
	man_examples(c, f)
	print ".SH SEE ALSO" > f
	print ".BR heapprof (1)" > f
	close(f)
}

# --- what the completions need --------------------------------------------

# Values an option's prose names, per command ("*" for any command).
function vocab(c, o) {
	if (c == "run" && o == "--unwind") return "dwarf fp"
	if (o == "--metric") return "leaked peak allocated allocations temporary"
	if (c == "diff" && o == "--format") return "text pprof"
	if ((c == "report" || c == "diff") && o == "--by")
		return "stack function line module type context thread heap"
	return ""
}

function addopt(c, name, arg, d) {
	if ((c, name) in has) {
		if (arg != "") optarg[c, name] = arg
		return
	}
	has[c, name] = 1
	nnames[c]++
	names[c, nnames[c]] = name
	optarg[c, name] = arg
	optdesc[c, name] = d
}

function addval(c, name, v) {
	if ((c, name, v) in hasval) return
	hasval[c, name, v] = 1
	vals[c, name] = vals[c, name] (vals[c, name] == "" ? "" : " ") v
}

# Reads a term ("-o, --output FILE", "--format pprof", "--at end|peak")
# into the command's options, their argument and their values.
function term(c, t, d,    n, a, i, arg, lit, k, v, nv, list) {
	n = split(t, a, / +/)
	arg = ""; lit = ""
	for (i = 1; i <= n; i++) {
		sub(/,$/, "", a[i])
		if (a[i] !~ /^-/) {
			if (a[i] ~ /^[A-Z]/) arg = a[i]
			else { arg = "VALUE"; lit = a[i] }
		}
	}
	for (i = 1; i <= n; i++) {
		if (a[i] !~ /^-/) continue
		addopt(c, a[i], arg, d)
		if (d != "") nterms[c, a[i]]++
		alias[c, a[i]] = ""
		for (k = 1; k <= n; k++)
			if (a[k] ~ /^-/) alias[c, a[i]] = alias[c, a[i]] (alias[c, a[i]] == "" ? "" : " ") a[k]
		if (lit != "") {
			nv = split(lit, v, /\|/)
			for (k = 1; k <= nv; k++) addval(c, a[i], v[k])
		}
		nv = split(vocab(c, a[i]), v, / /)
		for (k = 1; k <= nv; k++)
			if (d ~ ("(^|[^a-z])" v[k] "([^a-z]|$)"))
				addval(c, a[i], v[k])
	}
}

# Options and positional arguments of the usage line: "[--stacks]",
# "[--debug-dir DIR]", "--format pprof|gperftools|folded -o OUT", "BASE NEW",
# "[--] PROGRAM [ARGS...]".
function usage_words(c, u,    n, a, i, w, inopt, t) {
	sub(/^heapprof [^ ]+ ?/, "", u)
	n = split(u, a, / +/)
	npos[c] = 0
	for (i = 1; i <= n; i++) {
		w = a[i]
		if (w == "[options]" || w == "[--]") continue
		if (w ~ /^\[?-/) {
			t = w; gsub(/[\[\]]/, "", t)
			if (i < n && a[i + 1] !~ /^\[?-/ && a[i + 1] !~ /^\[/ && w !~ /\]$/) {
				t = t " " a[i + 1]; gsub(/[\[\]]/, "", t); i++
			} else if (w ~ /^\[/ && w !~ /\]$/ && i < n) {
				t = t " " a[i + 1]; gsub(/[\[\]]/, "", t); i++
			}
			term(c, t, "")
			continue
		}
		gsub(/[\[\]]/, "", w)
		pos[c, ++npos[c]] = w
	}
}

function gather(    i, c, k) {
	for (i = 1; i <= ncmd_pages; i++) {
		c = page[i]
		for (k = 1; k <= nopt[c]; k++) term(c, opt_term[c, k], opt_desc[c, k])
		usage_words(c, usage[c])
		addopt(c, "--help", "", "show the options of " c)
	}
}

# --- bash -------------------------------------------------------------------

function bash_out(    i, c, k, o, list, argopts, fileopts, diropts, prog) {
	print "# bash completion for heapprof(1)."
	print "# Generated from `heapprof --help` by scripts/gendocs.sh; do not edit."
	print ""
	print "# Fills COMPREPLY with the words of list that start with the word under"
	print "# the cursor."
	print "_heapprof_words()"
	print "{"
	print "\tmapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\")"
	print "}"
	print ""
	print "_heapprof_files()"
	print "{"
	print "\tcompopt -o filenames 2>/dev/null"
	print "\tmapfile -t COMPREPLY < <(compgen \"$1\" -- \"$cur\")"
	print "}"
	print ""
	print "# A capture operand: the *.hpf files and the directories; any file when"
	print "# none matches (a capture may have another name)."
	print "_heapprof_captures()"
	print "{"
	print "\tcompopt -o filenames 2>/dev/null"
	print "\tmapfile -t COMPREPLY < <(compgen -f -X \"!*.hpf\" -- \"$cur\"; compgen -d -- \"$cur\")"
	print "\t[ ${#COMPREPLY[@]} -gt 0 ] || mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")"
	print "}"
	print ""
	print "_heapprof()"
	print "{"
	print "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}"
	print "\tlocal cmd=${COMP_WORDS[1]} opts argopts i prog=0 caps=0"
	print "\tCOMPREPLY=()"
	list = ""
	for (i = 1; i <= ncmds; i++) list = list cmds[i] " "
	print "\tif [ \"$COMP_CWORD\" -eq 1 ]; then"
	print "\t\t_heapprof_words \"" list "--help --version\""
	print "\t\treturn"
	print "\tfi"
	print "\tcase $cmd in"
	for (i = 1; i <= ncmd_pages; i++) {
		c = page[i]
		list = ""; argopts = ""
		for (k = 1; k <= nnames[c]; k++) {
			o = names[c, k]
			list = list (list == "" ? "" : " ") o
			if (optarg[c, o] != "") argopts = argopts (argopts == "" ? "" : " ") o
		}
		prog = 0; caps = 0
		for (k = 1; k <= npos[c]; k++) {
			if (pos[c, k] == "PROGRAM") prog = 1
			if (pos[c, k] ~ /^(FILE|BASE|NEW)/) caps = 1
		}
		print "\t" c ")"
		print "\t\topts=\"" list "\" argopts=\"" argopts "\" prog=" prog " caps=" caps
		print "\t\tcase $prev in"
		for (k = 1; k <= nnames[c]; k++) {
			o = names[c, k]
			if (optarg[c, o] == "") continue
			if (vals[c, o] != "")
				print "\t\t" o ") _heapprof_words \"" vals[c, o] "\"; return ;;"
			else if (optarg[c, o] == "DIR")
				print "\t\t" o ") _heapprof_files -d; return ;;"
			else if (optarg[c, o] ~ /^(FILE|OUT)/)
				print "\t\t" o ") _heapprof_files -f; return ;;"
			else
				print "\t\t" o ") return ;;"
		}
		print "\t\tesac"
		print "\t\t;;"
	}
	print "\t*) return ;;"
	print "\tesac"
	print "\t# heapprof run: once PROGRAM is there, what follows is its own."
	print "\tif [ \"$prog\" = 1 ]; then"
	print "\t\tfor ((i = 2; i < COMP_CWORD; i++)); do"
	print "\t\t\tcase \" $argopts \" in *\" ${COMP_WORDS[i]} \"*) i=$((i + 1)); continue ;; esac"
	print "\t\t\tif [ \"${COMP_WORDS[i]}\" = -- ]; then i=$((i + 1)); break; fi"
	print "\t\t\tcase ${COMP_WORDS[i]} in -*) ;; *) break ;; esac"
	print "\t\tdone"
	print "\t\tif [ \"$i\" -lt \"$COMP_CWORD\" ]; then"
	print "\t\t\tif declare -F _command_offset >/dev/null; then _command_offset \"$i\"; else _heapprof_files -f; fi"
	print "\t\t\treturn"
	print "\t\tfi"
	print "\t\tif [ \"$prev\" = -- ] || [[ $cur != -* ]]; then"
	print "\t\t\tif [[ $cur == */* ]]; then _heapprof_files -f; else mapfile -t COMPREPLY < <(compgen -c -- \"$cur\" | sort -u); fi"
	print "\t\t\treturn"
	print "\t\tfi"
	print "\tfi"
	print "\tif [[ $cur == -* ]]; then"
	print "\t\t_heapprof_words \"$opts\""
	print "\telif [ \"$caps\" = 1 ]; then"
	print "\t\t_heapprof_captures"
	print "\telse"
	print "\t\t_heapprof_files -f"
	print "\tfi"
	print "}"
	print "complete -F _heapprof heapprof"
}

# --- zsh --------------------------------------------------------------------

# Text for a single-quoted _arguments spec: quotes, brackets and colons
# escaped; the first line of the description, without a closing ';'.
function zq(s) {
	sub(/\n.*/, "", s)
	sub(/;$/, "", s)
	gsub(/\\/, "\\\\", s)
	gsub(/'/, "'\\''", s)
	gsub(/\[/, "\\[", s)
	gsub(/\]/, "\\]", s)
	gsub(/:/, "\\:", s)
	return s
}

function zsh_out(    i, c, k, o, d, spec, act, ex, p, a) {
	print "#compdef heapprof"
	print "# zsh completion for heapprof(1)."
	print "# Generated from `heapprof --help` by scripts/gendocs.sh; do not edit."
	print ""
	print "_heapprof() {"
	print "\tlocal curcontext=$curcontext state line ret=1"
	print "\ttypeset -A opt_args"
	print "\t_arguments -C \\"
	print "\t\t'(- *)--help[show the commands]' \\"
	print "\t\t'(- *)--version[show the version]' \\"
	print "\t\t'1: :->command' \\"
	print "\t\t'*:: :->args' && ret=0"
	print "\tcase $state in"
	print "\tcommand)"
	print "\t\tlocal -a commands"
	print "\t\tcommands=("
	for (i = 1; i <= ncmds; i++)
		print "\t\t\t'" cmds[i] ":" zq(cmd_desc[cmds[i]]) "'"
	print "\t\t)"
	print "\t\t_describe -t commands 'heapprof command' commands && ret=0"
	print "\t\t;;"
	print "\targs)"
	print "\t\tcurcontext=${curcontext%:*:*}:heapprof-$line[1]:"
	print "\t\tcase $line[1] in"
	for (i = 1; i <= ncmd_pages; i++) {
		c = page[i]
		print "\t\t" c ")"
		print "\t\t\t_arguments -S \\"
		for (k = 1; k <= nnames[c]; k++) {
			o = names[c, k]
			d = optdesc[c, o]
			if (nterms[c, o] > 1)
				d = substr(o, 3) ": " vals[c, o]
			ex = alias[c, o] != o && alias[c, o] != "" ? "(" alias[c, o] ")" : ""
			act = ""
			if (optarg[c, o] != "") {
				a = tolower(optarg[c, o])
				if (vals[c, o] != "") act = ":" (a == "value" ? substr(o, 3) : a) ":(" vals[c, o] ")"
				else if (optarg[c, o] == "DIR") act = ":directory:_files -/"
				else if (optarg[c, o] ~ /^(FILE|OUT)/) act = ":" a ":_files"
				else act = ":" a ": "
			}
			print "\t\t\t\t'" ex o "[" zq(d) "]" act "' \\"
		}
		for (p = 1; p <= npos[c]; p++) {
			if (pos[c, p] == "PROGRAM") {
				print "\t\t\t\t'(-)" p ":program:_command_names -e' \\"
				print "\t\t\t\t'*::arguments:_normal' \\"
				break
			}
			if (pos[c, p] ~ /\.\.\.$/) continue
			print "\t\t\t\t'" p ":" (pos[c, p] == "FILE" ? "capture file" : tolower(pos[c, p]) " capture") \
				(pos[c, p] ~ /^(FILE|BASE|NEW)/ ? ":_files -g \"*.hpf(-.)\"' \\" : ":_files' \\")
		}
		print "\t\t\t\t&& ret=0"
		print "\t\t\t;;"
	}
	print "\t\tesac"
	print "\t\t;;"
	print "\tesac"
	print "\treturn ret"
	print "}"
	print ""
	print "_heapprof \"$@\""
}

END {
	if (mode == "man") {
		man_top()
		for (i = 1; i <= ncmd_pages; i++) man_cmd(page[i])
	} else {
		gather()
		if (mode == "bash") bash_out()
		else if (mode == "zsh") zsh_out()
	}
}
