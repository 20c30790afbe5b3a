/*
 * interpose_signal.c - sigaction and signal, so that the recorder's own
 * handlers stay invisible.
 *
 * The recorder catches SIGTERM, SIGINT and the fatal signals where the
 * program left the default action, to write its capture before the signal
 * takes effect. Many programs install a handler of their own only where
 * they find the default one (CPython's KeyboardInterrupt, for one): asked
 * about a signal the recorder handles, these report SIG_DFL, as the
 * program would see without heapprof. Installing a handler works as
 * always, and replaces the recorder's.
 *
 * In the static archive (HP_STATIC) the entry points are __wrap_X and the
 * next definitions __real_X, from the link (interpose_inline.h).
 */
#include <signal.h>
#include <string.h>

#include "interpose_inline.h"
#include "os.h"
#include "trigger.h"

/* Everything this file defines with external linkage is exported (the
 * version script then keeps just the interposed names). */
#pragma GCC visibility push(default)

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*(*signal_fn)(int, void (*)(int)))(int);

/* Looked up on first use: written racily, but every thread writes the
 * same value. */
static sigaction_fn next_sigaction;
static signal_fn next_signal;

#ifdef HP_STATIC
extern int __real_sigaction(int, const struct sigaction *, struct sigaction *);
extern void (*__real_signal(int, void (*)(int)))(int);
#define NEXT_OF(name) __real_##name
#else
#define NEXT_OF(name) (__typeof__(next_##name))hp_os_dlsym_next(#name)
#endif

int HP_ENTRY(sigaction)(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r;

	if (!next_sigaction)
		next_sigaction = NEXT_OF(sigaction);
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		/* The default action put back: the recorder's handler stands
		 * in for it where it would end the process (trigger.h). */
		struct sigaction prev;
		r = next_sigaction(sig, NULL, &prev);
		if (r == 0 && hp_trigger_keep_default(sig)) {
			if (old) {
				*old = prev;
				if (!(prev.sa_flags & SA_SIGINFO) && hp_trigger_owns(prev.sa_handler)) {
					memset(old, 0, sizeof *old);
					old->sa_handler = SIG_DFL;
				}
			}
			return 0;
		}
	}
	r = next_sigaction(sig, act, old);
	if (r == 0 && old && !(old->sa_flags & SA_SIGINFO) && hp_trigger_owns(old->sa_handler)) {
		memset(old, 0, sizeof *old);
		old->sa_handler = SIG_DFL;
	}
	return r;
}

void (*HP_ENTRY(signal)(int sig, void (*handler)(int)))(int)
{
	void (*prev)(int);

	if (!next_signal)
		next_signal = NEXT_OF(signal);
	if (handler == SIG_DFL) {
		struct sigaction o;
		if (!next_sigaction)
			next_sigaction = NEXT_OF(sigaction);
		if (next_sigaction(sig, NULL, &o) == 0 && hp_trigger_keep_default(sig)) {
			prev = o.sa_handler; /* with SA_SIGINFO, sa_sigaction: the same word */
			return hp_trigger_owns(prev) ? SIG_DFL : prev;
		}
	}
	prev = next_signal(sig, handler);
	return hp_trigger_owns(prev) ? SIG_DFL : prev;
}
