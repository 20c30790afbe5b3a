/*
 * options.c - the values of the recorder's options (see options.h).
 */
#include "options.h"

#include <signal.h>
#include <string.h>

int hp_option_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10) /* v * 10 + d would not fit */
			return -1;
		v = v * 10 + d;
	}
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	}
	if (v > UINT64_MAX >> shift)
		return -1;
	v <<= shift;
	if (shift && (*s == 'i' || *s == 'I')) /* KiB, MiB */
		s++;
	if (*s == 'b' || *s == 'B')
		s++;
	if (*s)
		return -1;
	*out = v;
	return 0;
}

static const struct {
	const char *name;
	int number;
} signal_names[] = {
	{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"PROF", SIGPROF},
	{"WINCH", SIGWINCH}, {"URG", SIGURG}, {"NONE", 0},
};

int hp_option_parse_signal(const char *s, int *out)
{
	uint64_t x;

	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (unsigned i = 0; i < sizeof signal_names / sizeof *signal_names; i++) {
		if (strcmp(s, signal_names[i].name) == 0) {
			*out = signal_names[i].number;
			return 0;
		}
	}
	if (hp_option_parse_u64(s, &x) < 0 || x > HP_OPTION_SIGNAL_MAX || x == SIGKILL ||
	    x == SIGSTOP || x == 32 || x == 33)
		return -1;
	*out = (int)x;
	return 0;
}
