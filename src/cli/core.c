/*
 * core.c - `heapprof core CORE [--exe PROGRAM] [--json] [--whatis ADDR...]`:
 * the glibc heap of a process that ran without heapprof, from its core
 * dump (src/analyzer/core/core.h, docs/core.md); for a process that ran under
 * heapprof, what its recorder held at the dump instead: the sites (stacks)
 * with their figures and every live block (core_rec.c).
 *
 * Exit status: 0 when the heap was walked whole; 1 when the core cannot
 * be read (another architecture, not a core), when it is truncated or its
 * heap could not be walked or is damaged (after showing what could be:
 * the walk goes past the damage), or when writing
 * failed; 2 for a usage error. A missing or changed binary is said on
 * stderr and costs only the type names.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include "../analyzer/core/core.h"
#include "../analyzer/embed.h"
#include "../analyzer/symbols/symbolize.h"
#include "../common/infile.h"
#include "../format/encode.h"
#include "cli.h"

static const char usage[] =
	"usage: heapprof core [options] CORE [--whatis ADDR...]\n"
	"\n"
	"The glibc malloc heap in the core dump of a process that ran without heapprof:\n"
	"every allocated block by size and by dynamic C++ type, and which are definitely\n"
	"lost, indirectly lost or still reachable from the threads' stacks and registers\n"
	"and the modules' data (a conservative scan, as memcheck and LeakSanitizer do).\n"
	"A process that ran under heapprof: its recorder's sites (stacks) with the\n"
	"objects and bytes allocated, freed, in use and at the peak (estimates when it\n"
	"sampled), how much of each site's is lost or still reachable, and every live\n"
	"block.\n"
	"  -o FILE          (under heapprof) write a capture of the heap at the dump,\n"
	"                   with its symbols, for report, export, flamegraph, diff...\n"
	"  --exe PROGRAM    the program's file, when it is not where the core says\n"
	"  --json           the same content as JSON, every block listed\n"
	"  --whatis         the operands after CORE are addresses: for each, the block\n"
	"                   holding it (start, size, offset), allocated or free, its\n"
	"                   type, what points to it, and (under heapprof) its\n"
	"                   allocation stack\n"
	"  --damage         every inconsistency of the heap's chunk headers and free\n"
	"                   lists (an overrun, a write after free, a double free): where,\n"
	"                   the bytes not walked, the block whose header it is and the\n"
	"                   block before it (the likely overrunner: start, size, how far\n"
	"                   past its end; under heapprof its allocation stack)\n"
	"  --top N          rows per table (default 20, 0 = all)\n"
	"  --all-frames     (under heapprof) every frame: also the runtime's below main\n"
	"                   and a thread's start, which the listing leaves out as the\n"
	"                   report does\n"
	"  --debug-dir DIR  also look for libc's debug file (by build-id) in DIR\n";

static int parse_addr(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0)
		s += 2;
	if (!*s || !strchr("0123456789abcdefABCDEF", *s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (*end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Writes the capture of the dump (hp_core_capture) to path ("-": standard
 * output), then embeds its symbols in a file (hp_embed_symbols), so it
 * can be analysed where the binaries are not. Returns 0, or -errno after
 * saying why. */
static int write_capture(const struct hp_core *c, const char *path, const char *core,
			 const char *debug_dir)
{
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	struct hp_cli_output o;
	struct hp_embed_result res;
	char err[1024];
	int ret;

	if (!c->rec.found) {
		hp_say_error("%s: no recorder's tables in the core (the process ran without "
			     "heapprof): -o writes a capture only for one that ran under it",
			     c->path);
		return -ENOENT;
	}
	ret = hp_core_capture(c, &buf);
	if (ret) {
		hp_say_error("%s: cannot make a capture: %s", c->path, strerror(-ret));
		free(buf.data);
		return ret;
	}
	if ((ret = hp_cli_output_open(&o, path, &core, 1))) {
		free(buf.data);
		return ret;
	}
	if (fwrite(buf.data, 1, buf.len, o.f) != buf.len)
		ret = errno ? -errno : -EIO;
	free(buf.data);
	if ((ret = hp_cli_output_close(&o, ret)))
		return ret;
	if (o.to_stdout || !o.regular)
		return 0;
	if (hp_embed_symbols(path, debug_dir, &res, err, sizeof err) < 0) {
		hp_say_error("%s: symbols not embedded: %s", path, err);
		return -EIO;
	}
	return 0;
}

/* The capture of the dump, in memory, and a symbolizer of it (from the
 * binaries NT_FILE names, their build-ids checked). Returns 0, or -errno
 * (nothing to free then). */
static int symbolizer(const struct hp_core *c, const char *debug_dir, struct hp_capture *cap,
		      struct hp_symbolizer **sym)
{
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	char err[256];
	int ret = hp_core_capture(c, &buf);

	if (!ret)
		ret = hp_capture_load_mem(buf.data, buf.len, cap, err, sizeof err);
	free(buf.data);
	if (ret < 0)
		return ret;
	if ((ret = hp_symbolizer_new(sym, cap, debug_dir, 0))) {
		hp_capture_free(cap);
		return ret;
	}
	return 0;
}

/* Whether path starts with an ELF header of type ET_CORE. */
static int is_core(const char *path)
{
	unsigned char h[EI_NIDENT + 2];
	const char *why;
	int fd = hp_infile_open(path, &why), yes; /* a FIFO: not a core, never waited on */
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, h, sizeof h);
	close(fd);
	/* e_type follows e_ident, in the file's byte order */
	yes = n == (ssize_t)sizeof h && memcmp(h, ELFMAG, SELFMAG) == 0 &&
	      (h[EI_DATA] == ELFDATA2MSB ? h[EI_NIDENT] << 8 | h[EI_NIDENT + 1]
					 : h[EI_NIDENT + 1] << 8 | h[EI_NIDENT]) == ET_CORE;
	return yes;
}

int hp_cli_capture_load(const char *path, struct hp_capture *cap, char *err, size_t errlen)
{
	return hp_cli_capture_load_flags(path, 0, cap, err, errlen);
}

int hp_cli_capture_load_flags(const char *path, unsigned flags, struct hp_capture *cap,
			      char *err, size_t errlen)
{
	struct hp_buf buf = {.grow = hp_buf_grow_heap};
	struct hp_core c;
	char cerr[1024];
	int ret;

	if (!is_core(path))
		return hp_capture_load_flags(path, flags, cap, err, errlen);
	ret = hp_core_open(&c, path, cerr, sizeof cerr);
	if (ret < 0) {
		snprintf(err, errlen, "%s", cerr);
		return ret;
	}
	if ((ret = hp_core_modules(&c, NULL)) || (ret = hp_core_recorder(&c))) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < c.nnotes; i++)
		hp_say_error("%s", c.notes[i]);
	if (!c.rec.found) {
		snprintf(err, errlen, "%s: a core without heapprof's recorder in it: `heapprof "
			 "core %s` shows its heap", path, path);
		ret = -EINVAL;
		goto out;
	}
	if ((ret = hp_core_capture(&c, &buf))) {
		snprintf(err, errlen, "%s: cannot make a capture of it: %s", path, strerror(-ret));
		goto out;
	}
	ret = hp_capture_load_mem_flags(buf.data, buf.len, flags, cap, cerr, sizeof cerr);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", path, cerr);
out:
	free(buf.data);
	hp_core_close(&c);
	return ret;
}

int hp_cmd_core(int argc, char **argv)
{
	static const struct hp_cli_use uses[] = {
		{HP_OPT_OUTPUT, 0, 0, NULL},
		{HP_OPT_EXE, 0, 0, NULL},
		{HP_OPT_JSON, 0, 0, NULL},
		{HP_OPT_WHATIS, 0, 0, NULL},
		{HP_OPT_DAMAGE, 0, 0, NULL},
		{HP_OPT_TOP, 0, LONG_MAX, NULL},
		{HP_OPT_ALL_FRAMES, 0, 0, NULL},
		{HP_OPT_DEBUG_DIR, 0, 0, NULL},
		{HP_OPT_HELP, 0, 0, NULL},
	};
	struct hp_core_report_options ro = {.top = 20};
	struct hp_capture cap;
	struct hp_symbolizer *sym = NULL;
	struct hp_cli_args a;
	struct hp_core c;
	struct hp_cli_output o;
	uint64_t *addrs = NULL;
	size_t naddrs = 0;
	char err[1024];
	int ret, status = HP_EXIT_OK;

	if (hp_cli_parse("core", usage, uses, sizeof uses / sizeof *uses, 0, argc, argv, &a))
		return HP_EXIT_USAGE;
	if (a.help)
		return HP_EXIT_OK;
	if (a.given[HP_OPT_TOP]) /* 0: all rows */
		ro.top = a.number[HP_OPT_TOP] && a.number[HP_OPT_TOP] < UINT_MAX
				 ? (unsigned)a.number[HP_OPT_TOP]
				 : UINT_MAX;
	ro.json = a.given[HP_OPT_JSON];
	ro.all_frames = a.given[HP_OPT_ALL_FRAMES];
	if (a.noperands < 1 || (a.noperands > 1 && !a.given[HP_OPT_WHATIS])) {
		hp_say_error("core: give one core file (and addresses after --whatis)");
		return HP_EXIT_USAGE;
	}
	if (a.given[HP_OPT_WHATIS]) {
		if (a.noperands < 2) {
			hp_say_error("core: --whatis wants at least one address after the core");
			return HP_EXIT_USAGE;
		}
		addrs = calloc((size_t)a.noperands, sizeof *addrs);
		if (!addrs) {
			hp_say_error("core: out of memory");
			return HP_EXIT_FAILURE;
		}
		for (int i = 1; i < a.noperands; i++) {
			if (parse_addr(argv[a.operand + i], &addrs[naddrs++])) {
				hp_say_error("core: --whatis wants hexadecimal addresses (0x...), not "
					     "'%s'", argv[a.operand + i]);
				free(addrs);
				return HP_EXIT_USAGE;
			}
		}
	}
	ret = hp_core_open(&c, argv[a.operand], err, sizeof err);
	if (ret < 0) {
		hp_say_error("%s", err);
		free(addrs);
		return HP_EXIT_FAILURE;
	}
	/* The glibc heap is walked in either case: without a recorder it is
	 * the answer; with one, it gives each recorded block its reachability
	 * (a heap that cannot be walked then costs only that), and --whatis
	 * answers from its blocks. A capture (-o) needs only the recorder. */
	if ((ret = hp_core_modules(&c, a.value[HP_OPT_EXE])) || (ret = hp_core_recorder(&c)) ||
	    ((!c.rec.found || !a.value[HP_OPT_OUTPUT] || addrs) &&
	     ((ret = hp_core_heap(&c, a.value[HP_OPT_DEBUG_DIR])) || (ret = hp_core_scan(&c))))) {
		hp_say_error("%s: %s", c.path, strerror(-ret));
		hp_core_close(&c);
		free(addrs);
		return HP_EXIT_FAILURE;
	}
	for (size_t i = 0; i < c.nnotes; i++)
		hp_say_error("%s", c.notes[i]);
	if ((!c.heap_ok && !c.rec.found) || c.need_bytes > c.map_bytes || c.ndamage)
		status = HP_EXIT_FAILURE;
	if (a.value[HP_OPT_OUTPUT] && !addrs) {
		status = write_capture(&c, a.value[HP_OPT_OUTPUT], argv[a.operand],
				       a.value[HP_OPT_DEBUG_DIR]) ? HP_EXIT_FAILURE : status;
		hp_core_close(&c);
		return status;
	}
	/* The recorder's frames get file:line from the capture of the dump's
	 * symbolizer; without it (out of memory) they keep their symbols. */
	if (c.rec.found && symbolizer(&c, a.value[HP_OPT_DEBUG_DIR], &cap, &sym) == 0) {
		ro.cap = &cap;
		ro.sym = sym;
	}
	hp_cli_output_open(&o, "-", NULL, 0); /* standard output: cannot fail */
	ret = addrs ? hp_core_whatis(o.f, &c, addrs, naddrs, &ro)
	      : a.given[HP_OPT_DAMAGE] ? hp_core_damage_report(o.f, &c, &ro)
	      : c.rec.found ? hp_core_rec_report(o.f, &c, &ro)
			    : hp_core_report(o.f, &c, &ro);
	/* Under heapprof the listing is the recorder's: the heap's damage,
	 * checked against it, follows (the JSON has it under --damage). */
	if (!ret && !addrs && !a.given[HP_OPT_DAMAGE] && c.rec.found && !ro.json && c.ndamage) {
		fputc('\n', o.f);
		ret = hp_core_damage_report(o.f, &c, &ro);
	}
	if (hp_cli_output_close(&o, ret))
		status = HP_EXIT_FAILURE;
	if (ro.sym) {
		hp_symbolizer_free(sym);
		hp_capture_free(&cap);
	}
	hp_core_close(&c);
	free(addrs);
	return status;
}
