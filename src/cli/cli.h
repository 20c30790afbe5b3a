/*
 * cli.h - the heapprof command: one function per subcommand, and the small
 * helpers they share.
 */
#ifndef HP_CLI_CLI_H
#define HP_CLI_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "../analyzer/capture.h"
#include "../analyzer/model.h"

/* Each returns the process exit status. argv[0] is the subcommand. */
int hp_cmd_run(int argc, char **argv);
int hp_cmd_inspect(int argc, char **argv);
int hp_cmd_report(int argc, char **argv);
int hp_cmd_export(int argc, char **argv);
int hp_cmd_flamegraph(int argc, char **argv);
int hp_cmd_diff(int argc, char **argv);
int hp_cmd_symbolize(int argc, char **argv);

/* Loads a capture, selects its image opts->image (or the default one) and
 * builds its model, for the commands that render one.
 * Prints what is wrong ("heapprof: FILE: ...") and returns 1 when the file
 * cannot be used; warns on stderr about damage and about modules whose
 * symbols could not be read, and returns 0. On 0, free both with
 * hp_model_free and hp_capture_free. */
int hp_cli_load_model(const char *path, const struct hp_model_options *opts,
		      struct hp_capture *cap, struct hp_model *model);

/* "12.3 MiB" into buf. */
const char *hp_cli_bytes(char *buf, size_t cap, uint64_t bytes);

/* Parses an option's decimal value in [min, max] into *out; returns 0, or
 * -1 after saying "heapprof: CMD: OPT wants a number ..." (a usage error). */
int hp_cli_number(const char *cmd, const char *opt, const char *s, long min, long max,
		  long *out);

/* An output file of a command: "-" (or NULL) is standard output.
 *
 * The rules, the same for every command that writes a file:
 * - a file that is one of the command's inputs (same device and inode,
 *   whatever the path) is refused before anything is written to it;
 * - a symbolic link at the path is refused (O_NOFOLLOW): one planted in a
 *   shared directory must not redirect the write to a file of the user's;
 *   "-" stands for standard output;
 * - a new file is created 0600 (before the umask), as captures are: a
 *   profile holds the program's paths, arguments and symbols; an existing
 *   file is truncated and keeps its mode and owner;
 * - a device or a FIFO is written as it is, never truncated or removed. */
struct hp_cli_output {
	const char *path;
	FILE *f;
	int to_stdout;
	int regular; /* a regular file: removed if writing fails */
};

/* Opens o for path; inputs[0..ninputs) are the files the command reads.
 * Returns 0, or 1 after saying why. */
int hp_cli_output_open(struct hp_cli_output *o, const char *path, const char *const *inputs,
		       size_t ninputs);

/* Closes o after a renderer returned ret (0 or -errno). On failure says
 * so and removes a partial regular file (never a device such as
 * /dev/full). Returns the exit status: 0 or 1. */
int hp_cli_output_close(struct hp_cli_output *o, int ret);

/* Prints "heapprof: <message>" on stderr. */
void hp_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
