/*
 * cli.h - the heapprof command: one function per subcommand, and the small
 * helpers they share.
 */
#ifndef HP_CLI_CLI_H
#define HP_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Each returns the process exit status. argv[0] is the subcommand. */
int hp_cmd_run(int argc, char **argv);
int hp_cmd_inspect(int argc, char **argv);

/* "12.3 MiB" into buf. */
const char *hp_cli_bytes(char *buf, size_t cap, uint64_t bytes);

/* Prints "heapprof: <message>" on stderr. */
void hp_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
