/*
 * test_install.c - building and installing heapprof as a user does: make
 * and make install as a non-root user on a machine without the test tools,
 * the man pages (rendered by groff), the bash and zsh completions (loaded
 * by the shells themselves) and the Debian package (built with make deb,
 * unpacked with dpkg -x, its heapprof run on a test program).
 *
 * Runs from the top of the tree (as make check does), on BUILD's binary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

/* The commands `heapprof --help` lists, as one space-separated line. */
static const char *commands(void)
{
	static char list[1024];
	char *out;

	if (list[0])
		return list;
	out = hp_test_sh_out("%s/heapprof --help | awk '/^commands:/ { on = 1; next } "
			     "/^$/ { on = 0 } on && /^  [a-z]/ { printf \"%%s \", $1 }'",
			     hp_test_build());
	if (out) {
		snprintf(list, sizeof list, "%s", out);
		free(out);
	}
	return list;
}

/* Whether every word of want appears as a whole word in got. */
static int has_words(const char *got, const char *want)
{
	char w[256];
	const char *p = want;
	int n;

	while (sscanf(p, "%255s%n", w, &n) == 1) {
		char pad[300];
		snprintf(pad, sizeof pad, " %s ", w);
		if (!strstr(got, pad))
			return 0;
		p += n;
	}
	return 1;
}

/* A user without Go, Chromium, clang, google-pprof or valgrind: PATH is a
 * directory of links to every program of the system's bin directories but
 * those, and dpkg-query says their packages are not installed. Commands run
 * as nobody when the test runs as root, else as the test's own user. */
static const char *bare_env(const char *dir)
{
	static char env[12000];
	int st = hp_test_sh(
		"set -e; cd %s; mkdir -p bin home; "
		"for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do "
		"  for f in $d/*; do n=${f##*/}; "
		"    case $n in go|gofmt|chromium*|clang*|google-pprof|pprof|valgrind*|heaptrack*) "
		"      continue ;; esac; "
		"    [ -e bin/$n ] || ln -s $f bin/$n; done; done; "
		"rm -f bin/dpkg-query; "
		"printf '%%s\\n' '#!/bin/sh' "
		"  'for a; do case $a in golang-go|chromium|clang|libclang-rt-*|google-perftools|valgrind) "
		"     echo \"dpkg-query: no packages found matching $a\" >&2; exit 1 ;; esac; done' "
		"  'exec /usr/bin/dpkg-query \"$@\"' > bin/dpkg-query; "
		"chmod 755 bin/dpkg-query; chmod -R a+rwX .",
		dir);
	expect_eq_u64(st, 0, "the user's bin directory is made");
	snprintf(env, sizeof env,
		 "%s env -i PATH=%s/bin HOME=%s/home LANG=C.UTF-8",
		 getuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups" : "",
		 dir, dir);
	return env;
}

HP_TEST(make_and_install_need_only_build_deps)
{
	char dir[4400], cwd[1024], *err;
	const char *env;
	int st;

	if (!getcwd(cwd, sizeof cwd))
		return;
	/* A scratch directory that nobody can reach: under /tmp, not under
	 * the build directory whose parents may be closed to other users. */
	err = hp_test_sh_out("mktemp -d /tmp/heapprof-install.XXXXXX");
	if (!err)
		return;
	snprintf(dir, sizeof dir, "%.*s", (int)strcspn(err, "\n"), err);
	free(err);
	hp_test_sh("chmod 755 %s", dir);
	env = bare_env(dir);
	st = hp_test_sh("%s sh -c 'command -v go || command -v chromium || "
			"command -v clang || command -v google-pprof' >/dev/null",
			env);
	expect_true(st != 0, "the simulated user has no Go, Chromium, clang, google-pprof");
	expect_eq_u64(hp_test_sh("cd %s && tar --exclude='./build*' --exclude=./.git -cf - . | "
				 "(mkdir -p %s/src && cd %s/src && tar -xf -) && chmod -R a+rwX %s/src",
				 cwd, dir, dir, dir),
		      0, "a copy of the tree");

	st = hp_test_sh("cd %s/src && %s make -j2 >%s/make.log 2>&1", dir, env, dir);
	if (!expect_eq_u64(st, 0, "make succeeds as a non-root user without the test tools"))
		hp_test_sh("tail -n 20 %s/make.log >&2", dir);
	st = hp_test_sh("cd %s/src && %s make install DESTDIR=%s/dest PREFIX=/opt/hp "
			">%s/install.log 2>&1",
			dir, env, dir, dir);
	if (!expect_eq_u64(st, 0, "make install DESTDIR=... succeeds as that user"))
		hp_test_sh("tail -n 20 %s/install.log >&2", dir);
	expect_eq_u64(hp_test_sh("cd %s/dest/opt/hp && test -x bin/heapprof && "
				 "test -f lib/heapprof/libheapprof.so && test -f include/heapprof.h && test -f include/heapprof.hpp && "
				 "test -f share/man/man1/heapprof.1 && test -f share/man/man1/heapprof-run.1 && "
				 "test -f share/bash-completion/completions/heapprof && "
				 "test -f share/zsh/site-functions/_heapprof",
				 dir),
		      0, "binary, recorder, header, man pages and completions under DESTDIR/PREFIX");
	/* The static recorder and its .pc, read by pkg-config itself (its
	 * prefix moved under DESTDIR): a static known linked with what it says
	 * records its leak under the installed heapprof run. */
	expect_eq_u64(hp_test_sh("cd %s/dest/opt/hp && test -f lib/heapprof/libheapprof.a && "
				 "test -f lib/pkgconfig/heapprof-static.pc",
				 dir),
		      0, "the static recorder and heapprof-static.pc under DESTDIR/PREFIX");
	expect_eq_u64(hp_test_sh("PKG_CONFIG_PATH=%s/dest/opt/hp/lib/pkgconfig pkg-config --static --libs "
				 "--define-variable=prefix=%s/dest/opt/hp heapprof-static | grep -q -- "
				 "'^-Wl,--wrap=malloc,.* -L%s/dest/opt/hp/lib/heapprof -l:libheapprof.a .*-lunwind -llzma .*-lzstd .*-lz $'",
				 dir, dir, dir),
		      0, "pkg-config --static --libs: the --wrap list, the archive, its dependencies");
	st = hp_test_sh("cd %s && PKG_CONFIG_PATH=%s/dest/opt/hp/lib/pkgconfig && export PKG_CONFIG_PATH && "
			"cc -O1 -g -fno-omit-frame-pointer -pthread -static -o known-static src/tests/programs/known.c "
			"$(pkg-config --static --libs --define-variable=prefix=%s/dest/opt/hp heapprof-static) "
			">static.log 2>&1 && "
			"%s/dest/opt/hp/bin/heapprof run -q -o static.hpf -- ./known-static && "
			"%s/dest/opt/hp/bin/heapprof report static.hpf | grep -q 'leak_leaf  known.c:'",
			dir, dir, dir, dir, dir);
	if (!expect_eq_u64(st, 0, "a program linked with the installed .pc records its leak"))
		hp_test_sh("tail -n 20 %s/static.log >&2", dir);

	st = hp_test_sh("cd %s/src && %s make demo >%s/demo.log 2>&1 && "
			"grep -q 'heapprof report' %s/demo.log",
			dir, env, dir, dir);
	if (!expect_eq_u64(st, 0, "make demo profiles the example as that user"))
		hp_test_sh("tail -n 20 %s/demo.log >&2", dir);
	st = hp_test_sh("cd %s/src && %s make deb >%s/deb.log 2>&1 && "
			"dpkg-deb -c build/heapprof_*.deb >%s/deb.list && "
			"grep -q ' root/root .* ./usr/bin/heapprof$' %s/deb.list",
			dir, env, dir, dir, dir);
	if (!expect_eq_u64(st, 0, "make deb as that user, without fakeroot: files owned by root"))
		hp_test_sh("tail -n 20 %s/deb.log >&2", dir);

	/* make check needs the test tools: it names the packages and stops,
	 * before building anything. */
	st = hp_test_sh("cd %s/src && %s make check >%s/check.log 2>&1", dir, env, dir);
	expect_true(st != 0, "make check fails without its tools");
	expect_eq_u64(hp_test_sh("grep -q 'apt-get install -y golang-go google-perftools "
				 "chromium clang libclang-rt-14-dev valgrind$' %s/check.log",
				 dir),
		      0, "make check names exactly the missing packages");
	hp_test_sh("rm -rf %s", dir);
}

HP_TEST(man_pages_render)
{
	const char *b = hp_test_build();
	char cmd[2048];
	const char *p;
	char c[64];
	int n;

	expect_eq_u64(hp_test_sh("cd %s/doc/man && test -f heapprof.1 && "
				 "for f in *.1; do groff -man -Tutf8 -ww -z \"$f\" 2>&1; done | "
				 "grep . >&2 && exit 1; exit 0",
				 b),
		      0, "groff renders every page without a warning");
	for (p = commands(); sscanf(p, "%63s%n", c, &n) == 1; p += n) {
		/* Every option the command's --help names is in its page, and
		 * its NAME line is the description heapprof --help gives it. */
		snprintf(cmd, sizeof cmd,
			 "cd %s && page=$(groff -man -Tutf8 -P-cbou -rLL=200n doc/man/heapprof-%s.1) && "
			 "for o in $(./heapprof %s --help | grep -oE -- '(^| |\\[)--?[a-z][a-z-]*' | "
			 "tr -d ' ['); do printf '%%s\\n' \"$page\" | grep -qe \"$o\" || "
			 "{ echo \"$o missing\" >&2; exit 1; }; done && "
			 "d=$(./heapprof --help | awk '/^commands:/ { on = 1; next } on && $1 == \"%s\" { "
			 "if (!sub(/^  [^ ].*[^ ]   +/, \"\")) { getline; sub(/^ +/, \"\") } print; exit }') && "
			 "printf '%%s\\n' \"$page\" | grep -qF \"heapprof-%s - $d\"",
			 b, c, c, c, c);
		expect_eq_u64(hp_test_sh("%s", cmd), 0, c);
	}
	expect_eq_u64(hp_test_sh("MANWIDTH=80 man -l %s/doc/man/heapprof.1 2>&1 | "
				 "grep -q 'heapprof-inspect(1)'",
				 b),
		      0, "man shows heapprof(1) and its SEE ALSO");
}

/* Every man page has an EXAMPLES section made of README.md's example
 * lines (issue 24, item 11): each README line "    heapprof CMD ..." is in
 * heapprof-CMD(1) and in heapprof(1), as man renders them. */
HP_TEST(man_pages_have_the_readmes_examples)
{
	const char *b = hp_test_build();
	char *out;

	if (!hp_test_need("man", "man-db"))
		return;
	out = hp_test_sh_out(
		"cd %s/doc && for f in man/*.1; do grep -q '^\\.SH EXAMPLES' $f || echo \"none: $f\"; "
		"done; n=0; t=$(printf '\\t'); while IFS=\"$t\" read -r c line why; do n=$((n + 1)); "
		"for p in heapprof-$c heapprof; do MANWIDTH=250 man -l man/$p.1 2>/dev/null | "
		"grep -qF -- \"$line\" || echo \"missing in $p: $line\"; done; done < help/examples.tsv; "
		"echo \"$n examples\"; grep -c '^    heapprof [a-z]' \"$OLDPWD/README.md\"",
		b);
	expect_true(out && strstr(out, "none:") == NULL && strstr(out, "missing") == NULL,
		    "every page has examples, and every README example is in its pages");
	if (out) {
		int n = 0, readme = 0;
		const char *at = strstr(out, " examples\n");
		while (at && at > out && at[-1] >= '0' && at[-1] <= '9')
			at--;
		if (at)
			sscanf(at, "%d examples\n%d", &n, &readme);
		expect_true(n >= 27 && n == readme, "as many examples as the README has");
		if (getenv("HP_TEST_VERBOSE") || strstr(out, "missing") || strstr(out, "none:"))
			printf("%s", out);
	}
	free(out);
}

/* The completion bash offers for a command line (words separated by
 * spaces; a trailing space starts a new word), as " w1 w2 ... ". */
static char *bash_complete(const char *line)
{
	return hp_test_sh_out(
		"bash --norc --noprofile -c 'source %s/doc/completion/heapprof; "
		"read -ra COMP_WORDS <<< \"%s\"; case \"%s\" in *\" \") COMP_WORDS+=(\"\") ;; esac; "
		"COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _heapprof; echo \" ${COMPREPLY[*]} \"' 2>/dev/null",
		hp_test_build(), line, line);
}

HP_TEST(bash_completion)
{
	char *out, want[1100];

	out = hp_test_sh_out("bash --norc --noprofile -c 'source %s/doc/completion/heapprof; "
			     "complete -p heapprof'",
			     hp_test_build());
	expect_str(out, "complete -F _heapprof heapprof\n", "bash loads it for heapprof");
	free(out);
	out = bash_complete("heapprof ");
	snprintf(want, sizeof want, "%s --help --version", commands());
	expect_true(out && has_words(out, want), "every command heapprof --help lists");
	free(out);
	out = bash_complete("heapprof run --u");
	expect_str(out, " --unwind \n", "run's options");
	free(out);
	out = bash_complete("heapprof run --unwind ");
	expect_str(out, " dwarf fp \n", "--unwind's values, from run --help");
	free(out);
	out = bash_complete("heapprof export x.hpf --format ");
	expect_str(out, " pprof gperftools folded \n", "export --format's values");
	free(out);
	out = bash_complete("heapprof diff --metric ");
	expect_str(out, " leaked peak allocated allocations temporary \n", "diff --metric's values");
	free(out);
	out = bash_complete("heapprof inspect --");
	expect_str(out, " --stacks --json --help \n", "inspect's options, from its usage line");
	free(out);
	out = bash_complete("heapprof run -o x.hpf --seed 1 printen");
	expect_str(out, " printenv \n", "run's PROGRAM is a command");
	free(out);
	/* Issue 24, item 11: --by's values, and captures for a capture. */
	out = bash_complete("heapprof report --by ");
	expect_str(out, " stack function line module type context thread heap \n",
		   "report --by's values");
	free(out);
	out = bash_complete("heapprof diff --by t");
	expect_str(out, " type thread \n", "diff --by's values");
	free(out);
	out = hp_test_sh_out(
		"d=%s/captures && rm -rf $d && mkdir -p $d/sub && touch $d/a.hpf $d/notes.txt && "
		"cd $d && bash --norc --noprofile -c 'source %s/doc/completion/heapprof; "
		"COMP_WORDS=(heapprof html \"\"); COMP_CWORD=2; _heapprof; "
		"printf \"%%s\\n\" \"${COMPREPLY[@]}\" | sort | tr \"\\n\" \" \"; echo; "
		"COMP_WORDS=(heapprof report n); COMP_CWORD=2; _heapprof; echo \"${COMPREPLY[*]}\"'",
		hp_test_tmp(), hp_test_build());
	expect_str(out, "a.hpf sub \nnotes.txt\n",
		   "a capture operand: *.hpf and directories first, any file when none matches");
	free(out);
}

/* The matches zsh's completion system offers for a line, as " w1 w2 ... ". */
static char *zsh_complete(const char *line)
{
	const char *tmp = hp_test_tmp();
	char *out;

	if (hp_test_sh("rm -rf %s/zsh && mkdir -p %s/zsh && cp %s/doc/completion/_heapprof %s/zsh/ && "
		       "zsh -f tests/integration/zsh_complete.zsh %s/zsh '%s' >/dev/null 2>&1",
		       tmp, tmp, hp_test_build(), tmp, tmp, line) != 0)
		return NULL;
	out = hp_test_sh_out("printf ' %%s ' \"$(sort -u %s/zsh/matches | grep -v '^ *$' | tr '\\n' ' ')\"",
			     tmp);
	return out;
}

HP_TEST(zsh_completion)
{
	char *out;

	if (!hp_test_need("zsh", "zsh"))
		return;
	expect_eq_u64(hp_test_sh("zsh -n %s/doc/completion/_heapprof", hp_test_build()), 0,
		      "zsh parses it");
	out = zsh_complete("heapprof ");
	expect_true(out && has_words(out, commands()), "every command heapprof --help lists");
	free(out);
	out = zsh_complete("heapprof export x.hpf --format ");
	expect_str(out, " folded gperftools pprof  ", "export --format's values");
	free(out);
	out = zsh_complete("heapprof run --unw");
	expect_str(out, " --unwind  ", "run's options");
	free(out);
}

HP_TEST(deb_installs_and_runs)
{
	const char *b = hp_test_build(), *tmp = hp_test_tmp();
	char path[4400];
	struct hp_capture *cap;
	char *out;
	int st;

	if (!hp_test_need("dpkg-deb", "dpkg"))
		return;
	st = hp_test_sh("make -s deb BUILD=%s >%s/deb.log 2>&1", b, tmp);
	if (!expect_eq_u64(st, 0, "make deb"))
		hp_test_sh("tail -n 20 %s/deb.log >&2", tmp);
	out = hp_test_sh_out("cd %s && v=$(./heapprof --version) && ls heapprof_${v#heapprof }_$(dpkg "
			     "--print-architecture).deb",
			     b);
	if (!out)
		return;
	free(out);
	expect_eq_u64(hp_test_sh("cd %s && rm -rf root && dpkg -x %s/heapprof_*.deb root && "
				 "test -x root/usr/bin/heapprof && "
				 "test -f root/usr/share/man/man1/heapprof-run.1.gz && "
				 "test -f root/usr/share/bash-completion/completions/heapprof && "
				 "test -f root/usr/share/zsh/vendor-completions/_heapprof",
				 tmp, b),
		      0, "dpkg -x unpacks binary, man pages and completions under /usr");
	/* Its Depends resolve on this system: each names an installed package. */
	expect_eq_u64(hp_test_sh("dpkg-deb -f %s/heapprof_*.deb Depends | tr ',' '\\n' | "
				 "sed 's/(.*//' | xargs dpkg-query -W >/dev/null",
				 b),
		      0, "every dependency is an installed package");
	expect_eq_u64(hp_test_sh("cd %s && zcat root/usr/share/man/man1/heapprof.1.gz | "
				 "groff -man -Tutf8 -ww -z",
				 tmp),
		      0, "the packaged man page renders");
	expect_eq_u64(hp_test_sh("cd %s && env -u HEAPPROF_LIB root/usr/bin/heapprof run -q "
				 "-o out.hpf -- %s/tests/programs/known && "
				 "root/usr/bin/heapprof report out.hpf > report.txt && "
				 "grep -q 'leak_leaf  known.c:' report.txt",
				 tmp, b),
		      0, "the packaged heapprof records a program and reports its leak");
	snprintf(path, sizeof path, "%s/out.hpf", tmp);
	if ((cap = hpq_load(path))) {
		int found = 0;
		for (size_t i = 0; i < cap->nmodules; i++)
			found |= strstr(cap->modules[i].path, "root/usr/lib/heapprof/libheapprof.so") !=
				 NULL;
		expect_true(found, "the packaged recorder was the one preloaded");
		hpq_free(cap);
	}
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
