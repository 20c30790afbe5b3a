/*
 * measure: run one command and report what it cost, without GNU time.
 *
 *   measure [-o FILE] [--] COMMAND [ARG]...
 *
 * Forks, execs COMMAND (searched in PATH) with the inherited stdin, stdout,
 * stderr and environment, waits for it with wait4() and writes one line:
 *
 *   wall_s=0.412345 cpu_s=0.409876 maxrss_kib=1234 status=0
 *
 * to FILE (or to stdout without -o; -o keeps the line apart from whatever the
 * command itself prints).
 *
 *   wall_s      CLOCK_MONOTONIC from just before fork() to wait4()'s return
 *   cpu_s       ru_utime + ru_stime of the child and of every descendant it
 *               waited for (a wrapper such as heaptrack's shell script is
 *               charged for its interpreter and compressor too)
 *   maxrss_kib  ru_maxrss: the largest peak RSS among those processes; it is
 *               a maximum, not a sum, so a profiler that does its work in a
 *               second process shows only the bigger of the two
 *   status      the exit code, or 128 + N if killed by signal N; exec failure
 *               is 127 (with a message on stderr)
 *
 * Exit code: the command's status as above; 2 for a usage error or a failed
 * fork/wait4 (no result line then).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double timespec_s(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static double timeval_s(const struct timeval *t)
{
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: measure [-o FILE] [--] COMMAND [ARG]...\n");
}

int main(int argc, char **argv)
{
	const char *result_path = NULL;
	int opt;

	/* '+': stop at the first non-option so COMMAND's own flags pass through. */
	while ((opt = getopt(argc, argv, "+o:h")) != -1) {
		switch (opt) {
		case 'o':
			result_path = optarg;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	char **command = &argv[optind];

	/* Open the result file before the run so a bad path fails fast. */
	FILE *result = stdout;
	if (result_path) {
		result = fopen(result_path, "w");
		if (!result) {
			fprintf(stderr, "measure: %s: %s\n", result_path, strerror(errno));
			return 2;
		}
	}
	/* Nothing buffered may be duplicated into the child by fork(). */
	fflush(NULL);

	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		/*
		 * run.sh starts us as a background job, for which the shell ignores
		 * SIGINT and SIGQUIT; the command should start as it would anywhere.
		 */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(command[0], command);
		fprintf(stderr, "measure: %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}

	int wait_status;
	struct rusage usage_info;
	while (wait4(pid, &wait_status, 0, &usage_info) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &end);

	int status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
					    : 128 + WTERMSIG(wait_status);
	double wall_s = timespec_s(&end) - timespec_s(&start);
	double cpu_s = timeval_s(&usage_info.ru_utime) + timeval_s(&usage_info.ru_stime);

	fprintf(result, "wall_s=%.6f cpu_s=%.6f maxrss_kib=%ld status=%d\n", wall_s, cpu_s,
		usage_info.ru_maxrss, status);
	if (fclose(result) != 0) {
		fprintf(stderr, "measure: %s: %s\n", result_path ? result_path : "stdout",
			strerror(errno));
		return 2;
	}
	return status;
}
