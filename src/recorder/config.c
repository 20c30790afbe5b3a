/*
 * config.c - reading HEAPPROF_* variables (see config.h).
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "../common/options.h"
#include "../format/format.h"
#include "log.h"
#include "os.h"

_Static_assert(HP_CONFIG_MAX_DEPTH_LIMIT == HP_OPTION_MAX_DEPTH_MAX, "one depth limit");

static const char *source; /* hp_config_set_source's block, or NULL */

void hp_config_set_source(const char *block)
{
	source = block;
}

/* The value of variable name: from the block when one is set, else from
 * the environment. */
static const char *lookup(const char *name)
{
	size_t n = strlen(name);

	if (!source)
		return hp_os_getenv(name);
	for (const char *s = source; *s; s += strlen(s) + 1)
		if (strncmp(s, name, n) == 0 && s[n] == '=')
			return s + n + 1;
	return NULL;
}

static void get_u64(const char *name, uint64_t *v, uint64_t min, uint64_t max)
{
	const char *s = lookup(name);
	uint64_t x;

	if (!s)
		return;
	if (hp_option_parse_u64(s, &x) < 0 || x < min || x > max) {
		hp_log("%s=%s is not a number in %llu..%llu, using %llu", name, s,
		       (unsigned long long)min, (unsigned long long)max, (unsigned long long)*v);
		return;
	}
	*v = x;
}

static void get_uint(const char *name, unsigned *v, unsigned min, unsigned max)
{
	uint64_t x = *v;
	get_u64(name, &x, min, max);
	*v = (unsigned)x;
}

static void get_signal(const char *name, int *v)
{
	const char *s = lookup(name);

	if (s && hp_option_parse_signal(s, v) < 0)
		hp_log("%s=%s is not a signal a handler can catch (USR1, USR2, HUP, a number, "
		       "or NONE)",
		       name, s);
}

void hp_config_load(struct hp_config *c)
{
	const char *s;
	uint64_t flag;

	memset(c, 0, sizeof *c);
	c->sample_rate_bytes = 1;
	c->unwind = HP_UNWIND_DWARF;
	c->max_depth = 128; /* jemalloc's too; deeper stacks keep their roots (roots.h) */
	c->max_stacks = HP_OPTION_MAX_STACKS_MAX;
	c->dump_signal = SIGUSR2;
	c->timeseries_ms = 10;
	c->timeline_ms = 100;

	s = lookup("HEAPPROF_QUIET");
	c->quiet = s && strcmp(s, "1") == 0;
	hp_log_set_quiet(c->quiet);

	get_u64("HEAPPROF_SAMPLE_RATE", &c->sample_rate_bytes, HP_OPTION_SAMPLE_RATE_MIN,
		HP_OPTION_SAMPLE_RATE_MAX);
	s = lookup("HEAPPROF_UNWIND");
	if (s && strcmp(s, "fp") == 0)
		c->unwind = HP_UNWIND_FP;
	else if (s && strcmp(s, "dwarf") != 0)
		hp_log("HEAPPROF_UNWIND=%s is not dwarf or fp, using dwarf", s);
	flag = 1;
	get_u64("HEAPPROF_UNWIND_CACHE", &flag, 0, 1);
	c->unwind_cache = (int)flag;
	flag = 0;
	get_u64("HEAPPROF_UNWIND_CHECK", &flag, 0, 1);
	c->unwind_check = (int)flag;
	get_uint("HEAPPROF_MAX_DEPTH", &c->max_depth, HP_OPTION_MAX_DEPTH_MIN, HP_OPTION_MAX_DEPTH_MAX);
	get_uint("HEAPPROF_MAX_STACKS", &c->max_stacks, HP_OPTION_MAX_STACKS_MIN,
		 HP_OPTION_MAX_STACKS_MAX);
	flag = 0;
	get_u64("HEAPPROF_FOLLOW_FORK", &flag, 0, 1);
	c->follow_fork = (int)flag;
	get_signal("HEAPPROF_DUMP_SIGNAL", &c->dump_signal);
	get_uint("HEAPPROF_INTERVAL_MS", &c->interval_ms, 0, HP_OPTION_INTERVAL_MS_MAX);
	get_u64("HEAPPROF_DUMP_EVERY_BYTES", &c->dump_every_bytes, 0, UINT64_MAX);
	get_u64("HEAPPROF_DUMP_HIGH_WATER_BYTES", &c->high_water_bytes, 0, UINT64_MAX);
	get_uint("HEAPPROF_TIMESERIES_MS", &c->timeseries_ms, 0, HP_OPTION_TIMESERIES_MS_MAX);
	get_uint("HEAPPROF_TIMELINE_MS", &c->timeline_ms, 0, HP_OPTION_TIMESERIES_MS_MAX);
	flag = 0;
	get_u64("HEAPPROF_LIVE_BLOCKS", &flag, 0, 1);
	c->live_blocks = (int)flag;
	flag = 0;
	get_u64("HEAPPROF_EVENTS", &flag, 0, 1);
	c->events = (int)flag;
	get_u64("HEAPPROF_SEED", &c->seed, 0, UINT64_MAX);
	flag = 1;
	get_u64("HEAPPROF_TYPES", &flag, 0, 1);
	c->types = (int)flag;
	flag = 0;
	get_u64("HEAPPROF_MMAP", &flag, 0, 1);
	c->mmap = (int)flag;
	flag = 0;
	get_u64("HEAPPROF_OUTPUT_CLAIMED", &flag, 0, 1u << 30);
	c->claimed_pid = (int)flag;
	s = lookup("HEAPPROF_ROSTER");
	if (s && strlen(s) < sizeof c->roster)
		strcpy(c->roster, s);
	s = lookup("HEAPPROF_OUTPUT");
	if (s && strlen(s) < sizeof c->output)
		strcpy(c->output, s);
	else if (s)
		hp_log("HEAPPROF_OUTPUT is too long, using the default name");
}
