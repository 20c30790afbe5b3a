/*
 * trigger.c - signals, byte triggers, intervals and the time series (see
 * trigger.h).
 */
#include "trigger.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "../format/format.h"
#include "aggregate.h"
#include "attr.h"
#include "log.h"
#include "os.h"
#include "recorder.h"
#include "writer.h"

/* Every signal whose default action ends the process (with a core or
 * without), so that each leaves the fatal-signal snapshot (a SIGPIPE in a
 * pipeline the commonest), then ends it as it would have; the real-time
 * ones from SIGRTMIN on are added at init (fatal_rt). Not the dump
 * signal, which has its own handler. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGABRT,   SIGFPE,  SIGILL,  SIGTERM,
				    SIGINT,  SIGHUP,  SIGQUIT,   SIGTRAP, SIGPIPE, SIGALRM,
				    SIGUSR1, SIGUSR2, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM,
				    SIGPROF, SIGIO,   SIGPWR,    SIGSYS};
/* SIGRTMIN (glibc keeps the first real-time signals for itself) as read
 * at init; 0 before. */
static int fatal_rt;

/* The n-th signal of the fatal set, or 0 past its end. */
static int fatal_signal(unsigned n)
{
	unsigned fixed = sizeof fatal_signals / sizeof *fatal_signals;

	if (n < fixed)
		return fatal_signals[n];
	if (fatal_rt && fatal_rt + (int)(n - fixed) <= SIGRTMAX)
		return fatal_rt + (int)(n - fixed);
	return 0;
}

/* Set at init (and in a fork child), read-only otherwise. */
static const struct hp_config *config;

/* Snapshot requests (trigger.h). */
unsigned hp_trigger_pending;
#define pending hp_trigger_pending

/* Byte triggers: bytes allocated, flushed from each thread in chunks so
 * that threads do not fight over one counter; next thresholds. Atomics. */
#define FLUSH_BYTES (1u << 20)
static uint64_t allocated_bytes;
static uint64_t next_every;
static uint64_t next_high_water;

/* Time of the next time-series sample and interval snapshot (monotonic
 * ns); racy reads and writes by any thread: at worst two threads both take
 * a sample. */
static uint64_t next_sample_ns;
static uint64_t next_interval_ns;
static uint64_t next_tick_ns; /* the timeline's, as the sample's */

/* A timeline tick that lists more buckets than this pushes the next one
 * back in proportion, so that a program that changes many sites keeps a
 * small capture: at most about TICK_ENTRIES * 1000 / timeline_ms entries
 * a second (docs/format.md, TIMELINE). */
#define TICK_ENTRIES 256u

/* Interval snapshots are spaced out so that writing them takes at most
 * 1/INTERVAL_SHARE of the run's time: the next is due no sooner than
 * INTERVAL_SHARE times the last round's cost after it began. A snapshot's
 * cost grows with the stacks and, for some of its parts (the C++ types'
 * walk of the live register, --live-blocks), with the live blocks: with 2
 * Mi live blocks and --interval 100, snapshots back to back would leave
 * the program little time of its own. The report gives the spacing the
 * snapshots really had. */
#define INTERVAL_SHARE 20u

void hp_trigger_request(unsigned reason)
{
	__atomic_fetch_or(&pending, 1u << reason, __ATOMIC_RELEASE);
	/* After the request: a slow path that finds the bit finds it. */
	__atomic_fetch_or(&hp_rare, HP_RARE_PENDING, __ATOMIC_RELEASE);
}

static void on_fatal(int sig)
{
	static int once; /* the first fatal signal writes; later ones just die */
	/* Written only with room for the writer on the stack we run on: a
	 * small signal stack would overflow, and the program would die of
	 * SIGSEGV instead of its own signal. */
	if (!__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL) && hp_state == HP_STATE_ACTIVE &&
	    hp_stack_room(&hp_self) >= HP_WRITE_STACK_BYTES) {
		unsigned outside = !hp_self.busy && !hp_self.forwarding ? HP_WRITE_OUTSIDE : 0;
		hp_self.busy++;
		hp_writer_snapshot(HP_SNAP_FATAL, sig, HP_WRITE_FATAL | outside);
		hp_state = HP_STATE_OFF;
		__atomic_or_fetch(&hp_rare, HP_RARE_OFF, __ATOMIC_RELAXED);
		hp_self.busy--;
	}
	/* Let the signal do what it would have done: with the default action
	 * restored, the re-raised signal is delivered when we return (a fault
	 * would also recur on the faulting instruction). */
	hp_os_set_handler(sig, NULL, 0);
	hp_os_raise(sig);
}

/* The dump signal: when it interrupts code outside the recorder, write
 * the snapshot at once (the writer then skips the module refresh, which
 * could meet the loader's lock); otherwise, or when another thread is
 * writing, leave it to the next allocation. */
static void on_dump(int sig)
{
	int saved = errno;

	if (hp_state == HP_STATE_ACTIVE && !hp_self.busy && !hp_self.forwarding &&
	    hp_stack_room(&hp_self) >= HP_WRITE_STACK_BYTES) {
		hp_self.forwarding++;
		if (hp_writer_snapshot(HP_SNAP_SIGNAL, sig, HP_WRITE_SIGNAL | HP_WRITE_OUTSIDE) ==
		    -EDEADLK)
			hp_trigger_request(HP_SNAP_SIGNAL);
		hp_self.forwarding--;
	} else {
		hp_trigger_request(HP_SNAP_SIGNAL);
	}
	errno = saved;
}

int hp_trigger_owns(void (*handler)(int))
{
	return handler == on_fatal || handler == on_dump;
}

/* SIGSEGV and SIGBUS may come from a stack overflow: their handler runs
 * on the program's signal stack if it has one (SA_ONSTACK). The others
 * run on the thread's own stack, which has room, even where the program
 * set up a small signal stack for its own handlers. */
static void install(int sig, void (*handler)(int))
{
	struct sigaction old;

	if (hp_os_sigaction(sig, NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO))
		return; /* the program has its own: leave it */
	hp_os_set_handler(sig, handler,
			  SA_RESTART | (sig == SIGSEGV || sig == SIGBUS ? SA_ONSTACK : 0));
}

int hp_trigger_keep_default(int sig)
{
	int fatal = 0;

	if (!config || config->attached || sig == config->dump_signal ||
	    __atomic_load_n(&hp_state, __ATOMIC_ACQUIRE) != HP_STATE_ACTIVE)
		return 0;
	for (unsigned i = 0; fatal_signal(i) && !fatal; i++)
		fatal = fatal_signal(i) == sig;
	if (!fatal)
		return 0;
	return hp_os_set_handler(sig, on_fatal,
				 SA_RESTART | (sig == SIGSEGV || sig == SIGBUS ? SA_ONSTACK : 0)) == 0;
}

/* Puts back the default action where the handler is still ours. */
static void uninstall(int sig)
{
	struct sigaction old;

	if (hp_os_sigaction(sig, NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
	    !hp_trigger_owns(old.sa_handler))
		return;
	hp_os_set_handler(sig, NULL, 0);
}

void hp_trigger_stop(void)
{
	for (unsigned i = 0; fatal_signal(i); i++)
		uninstall(fatal_signal(i));
	if (config && config->dump_signal > 0)
		uninstall(config->dump_signal);
}

void hp_trigger_init(const struct hp_config *c)
{
	config = c;
	/* Attached to a running program: its signals stay as they are (it
	 * may install handlers of its own at any time, and nothing of ours
	 * may stay behind after the detach). */
	fatal_rt = SIGRTMIN;
	for (unsigned i = 0; fatal_signal(i) && !c->attached; i++)
		if (fatal_signal(i) != c->dump_signal)
			install(fatal_signal(i), on_fatal);
	if (c->dump_signal > 0 && !c->attached)
		install(c->dump_signal, on_dump);
	next_every = c->dump_every_bytes;
	next_high_water = c->high_water_bytes;
	next_interval_ns = c->interval_ms ? hp_os_now_ns() + c->interval_ms * 1000000ull : 0;
}

void hp_trigger_allocated(uint64_t bytes)
{
	uint64_t total, peak;
	struct hp_thread *t = &hp_self; /* its unflushed_bytes */

	if (!config->dump_every_bytes && !config->high_water_bytes)
		return;
	t->unflushed_bytes += bytes;
	if (t->unflushed_bytes < FLUSH_BYTES && t->unflushed_bytes < config->dump_every_bytes)
		return;
	total = __atomic_add_fetch(&allocated_bytes, t->unflushed_bytes, __ATOMIC_RELAXED);
	t->unflushed_bytes = 0;
	if (config->dump_every_bytes && total >= __atomic_load_n(&next_every, __ATOMIC_RELAXED)) {
		__atomic_store_n(&next_every, total + config->dump_every_bytes, __ATOMIC_RELAXED);
		hp_trigger_request(HP_SNAP_BYTES);
	}
	if (config->high_water_bytes) {
		struct hp_totals t;
		hp_agg_totals(&t);
		peak = t.peak_estimate_bytes; /* the raw peak_bytes is not monotone when sampled */
		if (peak >= __atomic_load_n(&next_high_water, __ATOMIC_RELAXED)) {
			__atomic_store_n(&next_high_water, peak + config->high_water_bytes,
					 __ATOMIC_RELAXED);
			hp_trigger_request(HP_SNAP_HIGH_WATER);
		}
	}
}

/* The finest period of the time-based work (the time series, the
 * timeline, interval snapshots) in ns; 0 when there is none. */
static uint64_t finest_ns(void)
{
	uint64_t ms = 0;
	unsigned p[3] = {config->timeseries_ms, config->timeline_ms, config->interval_ms};

	for (int i = 0; i < 3; i++)
		if (p[i] && (!ms || p[i] < ms))
			ms = p[i];
	return ms * 1000000ull;
}

/* Sets the thread's look period after a look at now: back to 1 when this
 * look comes the finest period or more after the last one (the thread
 * allocates rarely: every change gets its time, so a program that grows
 * by 60 blocks over 3 s has a point at each, and --interval fires on a
 * program that allocates 20 times a second), doubled up to most while
 * looks come within a quarter of it (a busy thread reads the clock once
 * every `most` slow paths, as a fixed countdown would). */
static void adapt(struct hp_thread *t, uint64_t now, uint32_t most)
{
	uint64_t finest = finest_ns(), gap = now - t->last_look_ns;

	if (!finest)
		t->every = most;
	else if (gap >= finest)
		t->every = 1;
	else if (gap < finest / 4)
		t->every *= 2;
	if (t->every > most)
		t->every = most;
	if (!t->every)
		t->every = 1;
	t->ticks = t->every;
	t->last_look_ns = now;
}

void hp_trigger_tick_due(struct hp_thread *t, uint32_t every)
{
	unsigned req;
	uint64_t now;

	/* HP_RARE_PENDING lowered before pending is read: a request made
	 * after this raises it again; one made before is taken below. */
	if (__atomic_load_n(&hp_rare, __ATOMIC_RELAXED) & HP_RARE_PENDING)
		__atomic_and_fetch(&hp_rare, ~HP_RARE_PENDING, __ATOMIC_ACQ_REL);
	req = __atomic_load_n(&pending, __ATOMIC_ACQUIRE);
	if (!req && t->ticks > 1) { /* a request taken by another thread since */
		t->ticks--;
		return;
	}
	/* The writer's system calls may set errno, and a free's slow path
	 * does not save it (recorder.c, hp_record_free): kept here. */
	int saved_errno = errno;
	now = hp_os_now_ns();
	adapt(t, now, every);
	/* The thread's name again, every 10 ms at most: one set later, from
	 * another thread too, shows up (attr.h). */
	hp_attr_thread_due(&hp_attr_self, now);
	/* busy while the writer's lock may be held: a signal handler's
	 * allocation on top of us must not wait for it. */
	t->busy++;
	if (config->timeseries_ms && now >= __atomic_load_n(&next_sample_ns, __ATOMIC_RELAXED)) {
		struct hp_totals t;
		__atomic_store_n(&next_sample_ns, now + config->timeseries_ms * 1000000ull,
				 __ATOMIC_RELAXED);
		hp_agg_totals(&t);
		hp_writer_sample(t.in_use_estimate_bytes, hp_os_rss_bytes());
	} else if (config->timeseries_ms && t->every < every) {
		/* A thread that allocates rarely (its look period below the
		 * most): its change keeps its time, written before the next
		 * sample. A busy thread's looks owe nothing: the samples
		 * follow it at the period. */
		struct hp_totals tot;
		hp_agg_totals(&tot);
		hp_writer_sample_owed(now, tot.in_use_estimate_bytes);
	}
	if (config->timeline_ms && now >= __atomic_load_n(&next_tick_ns, __ATOMIC_RELAXED)) {
		uint64_t period = config->timeline_ms * 1000000ull;
		/* Claimed before the tick, so that another thread does not take
		 * one too; then pushed back by the tick's size. */
		__atomic_store_n(&next_tick_ns, now + period, __ATOMIC_RELAXED);
		uint32_t n = hp_writer_timeline();
		if (n > TICK_ENTRIES)
			__atomic_store_n(&next_tick_ns, now + period * (n / TICK_ENTRIES),
					 __ATOMIC_RELAXED);
	}
	if (config->interval_ms && now >= __atomic_load_n(&next_interval_ns, __ATOMIC_RELAXED)) {
		__atomic_store_n(&next_interval_ns, now + config->interval_ms * 1000000ull,
				 __ATOMIC_RELAXED);
		req |= 1u << HP_SNAP_INTERVAL;
	}
	if (req) {
		req |= __atomic_exchange_n(&pending, 0, __ATOMIC_ACQ_REL);
		for (unsigned r = 1; r < 32; r++)
			if (req & (1u << r))
				hp_writer_snapshot(r, r == HP_SNAP_SIGNAL ? config->dump_signal : 0, 0);
		if (config->interval_ms) {
			uint64_t next = now + (hp_os_now_ns() - now) * INTERVAL_SHARE;
			if (next > __atomic_load_n(&next_interval_ns, __ATOMIC_RELAXED))
				__atomic_store_n(&next_interval_ns, next, __ATOMIC_RELAXED);
		}
	}
	t->busy--;
	errno = saved_errno;
}
