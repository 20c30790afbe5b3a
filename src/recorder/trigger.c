/*
 * trigger.c - signals, byte triggers and the sampling thread (see
 * trigger.h).
 */
#include "trigger.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "../format/format.h"
#include "aggregate.h"
#include "log.h"
#include "os.h"
#include "recorder.h"
#include "writer.h"

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM, SIGINT};

/* Set at init (and in a fork child), read-only otherwise. */
static const struct hp_config *config;

/* Requests for the sampling thread: a bit per HP_SNAP_* reason, set with
 * atomic OR by any thread or signal handler, cleared by the thread. */
static unsigned pending;

/* The sampling thread: running is set by it and cleared by stop. */
static int running;
static int stop;
static int thread_done;

/* Byte triggers: bytes allocated, flushed from each thread in chunks so
 * that threads do not fight over one counter; next thresholds. Atomics. */
#define FLUSH_BYTES (1u << 20)
static __thread uint64_t unflushed __attribute__((tls_model("initial-exec")));
static uint64_t allocated_bytes;
static uint64_t next_every;
static uint64_t next_high_water;

void hp_trigger_request(unsigned reason)
{
	__atomic_fetch_or(&pending, 1u << reason, __ATOMIC_RELEASE);
}

static void on_fatal(int sig)
{
	static int once; /* the first fatal signal writes; later ones just die */
	struct sigaction dfl;

	if (!__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL) && hp_state == HP_STATE_ACTIVE) {
		hp_self.busy++;
		hp_writer_snapshot(HP_SNAP_FATAL, sig, HP_WRITE_FATAL);
		hp_state = HP_STATE_OFF;
		hp_self.busy--;
	}
	/* Let the signal do what it would have done: with the default action
	 * restored, the re-raised signal is delivered when we return (a fault
	 * would also recur on the faulting instruction). */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void on_dump(int sig)
{
	(void)sig;
	hp_trigger_request(HP_SNAP_SIGNAL);
}

static void install(int sig, void (*handler)(int))
{
	struct sigaction old, sa;

	if (sigaction(sig, NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO))
		return; /* the program has its own: leave it */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

void hp_trigger_init(const struct hp_config *c)
{
	config = c;
	for (unsigned i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		install(fatal_signals[i], on_fatal);
	if (c->dump_signal > 0)
		install(c->dump_signal, on_dump);
	next_every = c->dump_every_bytes;
	next_high_water = c->high_water_bytes;
}

void hp_trigger_allocated(uint64_t bytes)
{
	uint64_t total, peak;

	if (!config->dump_every_bytes && !config->high_water_bytes)
		return;
	unflushed += bytes;
	if (unflushed < FLUSH_BYTES && unflushed < config->dump_every_bytes)
		return;
	total = __atomic_add_fetch(&allocated_bytes, unflushed, __ATOMIC_RELAXED);
	unflushed = 0;
	if (config->dump_every_bytes && total >= __atomic_load_n(&next_every, __ATOMIC_RELAXED)) {
		__atomic_store_n(&next_every, total + config->dump_every_bytes, __ATOMIC_RELAXED);
		hp_trigger_request(HP_SNAP_BYTES);
	}
	if (config->high_water_bytes) {
		struct hp_totals t;
		hp_agg_totals(&t);
		peak = t.peak_bytes;
		if (peak >= __atomic_load_n(&next_high_water, __ATOMIC_RELAXED)) {
			__atomic_store_n(&next_high_water, peak + config->high_water_bytes,
					 __ATOMIC_RELAXED);
			hp_trigger_request(HP_SNAP_HIGH_WATER);
		}
	}
}

static void *sampling_thread(void *arg)
{
	const struct hp_config *c = arg;
	unsigned tick_ms = c->timeseries_ms ? c->timeseries_ms : 10;
	uint64_t next_interval = c->interval_ms ? hp_os_now_ns() + c->interval_ms * 1000000ull : 0;
	sigset_t all;

	/* This thread records nothing and takes no signals: they are the
	 * program's. */
	hp_self.forwarding = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		unsigned req;
		uint64_t now;

		hp_os_sleep_ms(tick_ms < 10 ? tick_ms : 10);
		if (hp_state != HP_STATE_ACTIVE || __atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			break;
		if (c->timeseries_ms) {
			struct hp_totals t;
			hp_agg_totals(&t);
			hp_writer_sample(t.in_use_bytes, hp_os_rss_bytes());
		}
		now = hp_os_now_ns();
		if (next_interval && now >= next_interval) {
			hp_trigger_request(HP_SNAP_INTERVAL);
			next_interval = now + c->interval_ms * 1000000ull;
		}
		req = __atomic_exchange_n(&pending, 0, __ATOMIC_ACQ_REL);
		for (unsigned r = 1; r < 32; r++)
			if (req & (1u << r))
				hp_writer_snapshot(r, r == HP_SNAP_SIGNAL ? c->dump_signal : 0, 0);
	}
	__atomic_store_n(&thread_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void hp_trigger_start_thread(const struct hp_config *c)
{
	pthread_t tid;
	pthread_attr_t attr;
	int err;

	config = c;
	stop = 0;
	thread_done = 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	err = pthread_create(&tid, &attr, sampling_thread, (void *)c);
	pthread_attr_destroy(&attr);
	if (err)
		hp_log("cannot start the sampling thread (error %d): no time series, and dumps "
		       "on signals wait for exit", err);
	else
		running = 1;
}

void hp_trigger_stop_thread(void)
{
	if (!running)
		return;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	/* Wait up to 50 ms for it to leave the writer; it is detached, and at
	 * exit a thread that does not stop is simply ended with the process. */
	for (int i = 0; i < 50 && !__atomic_load_n(&thread_done, __ATOMIC_ACQUIRE); i++)
		hp_os_sleep_ms(1);
	running = 0;
}
