/*
 * aslimit.c - a program run under an address-space limit (RLIMIT_AS).
 *
 *     aslimit MIB fit       one block of MIB MiB (big_alloc), then freed
 *     aslimit MIB exhaust   the same block kept, then 1 MiB blocks
 *                           (exhaust_alloc) until malloc returns NULL,
 *                           then pages from mmap until it fails too (malloc
 *                           leaves up to its 128 KiB top pad unused): at
 *                           exit the address space is full
 *
 * stdout says what happened and is the same bare or recorded when the
 * limit leaves room for the recorder; the exit status is 0, or 1 when the
 * big block was refused. stderr has what differs between runs: the number
 * of 1 MiB blocks and VmPeak (kB), read without malloc (stdio and
 * /proc readers would need memory that may be gone).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")
#define MAX_BLOCKS 65536

NOINLINE void *big_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	return p;
}

NOINLINE void *exhaust_alloc(void)
{
	void *p = malloc(1 << 20);
	KEEP(p);
	return p;
}

/* "blocks N vmpeak K\n" on stderr, with write(2) only. */
static void report(unsigned long blocks)
{
	char status[4096], line[96];
	const char *peak;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, status, sizeof status - 1);

	if (fd >= 0)
		close(fd);
	status[n > 0 ? n : 0] = '\0';
	peak = strstr(status, "VmPeak:");
	snprintf(line, sizeof line, "blocks %lu vmpeak %ld\n", blocks,
		 peak ? strtol(peak + 7, NULL, 10) : -1L);
	if (write(2, line, strlen(line)) < 0)
		return;
}

int main(int argc, char **argv)
{
	static void *blocks[MAX_BLOCKS];
	unsigned long n = 0;
	size_t size;
	char *big;

	if (argc != 3)
		return 2;
	size = strtoul(argv[1], NULL, 10) << 20;
	big = big_alloc(size);
	if (!big) {
		puts("big block: no memory");
		return 1;
	}
	memset(big, 1, 4096);
	big[size - 1] = 1;
	puts("big block: ok");
	if (strcmp(argv[2], "exhaust") == 0) {
		while (n < MAX_BLOCKS && (blocks[n] = exhaust_alloc()))
			n++;
		while (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			    0) != MAP_FAILED)
			;
		puts(n < MAX_BLOCKS ? "exhausted" : "never exhausted");
	} else {
		free(big);
	}
	fflush(stdout);
	report(n);
	return 0;
}
