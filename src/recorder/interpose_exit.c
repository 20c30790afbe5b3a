/*
 * interpose_exit.c - _exit, _Exit and the exec family: the moments a
 * process image ends without running exit handlers.
 *
 * exit() and a return from main are seen by the library's destructor
 * (recorder.c), which defers the exit snapshot until every other
 * destructor and exit handler has run. _exit and _Exit end the process
 * at once: the snapshot is written first (Debian's /bin/sh ends this way,
 * and so do forked children). An exec replaces the image: a snapshot of
 * the old one is written into its capture, which the new image, preloaded
 * again, appends to. Each forwards to the next definition afterwards, with
 * the caller's arguments untouched.
 *
 * glibc calls its internal _exit and execve directly (exit, execvp,
 * system), so every public entry point is interposed on its own.
 * A vfork child shares our memory and must not write the parent's
 * capture: the recorder checks the pid before writing (writer.h).
 *
 * In the static archive (HP_STATIC) the entry points are __wrap_X and the
 * next definitions __real_X, from the link (interpose_inline.h). There
 * libc's exit reaches _exit through the wrapper too: the snapshot is then
 * already written, and hp_record_exit_now does nothing more.
 */
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "attach.h"
#include "interpose_inline.h"
#include "os.h"
#include "recorder.h"

#pragma GCC visibility push(default)

typedef void (*exit_fn)(int);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

/* The next definitions: looked up with the allocator's at start
 * (hp_interpose_exit_resolve), so that a vfork child's _exit or exec calls
 * no dlsym (which may allocate in the memory it shares with its parent);
 * looked up on first use if start has not happened yet. Written racily,
 * but every thread writes the same value. */
static exit_fn next__exit, next__Exit;
static execve_fn next_execve, next_execvpe;
static execv_fn next_execv, next_execvp;
static fexecve_fn next_fexecve;
static execveat_fn next_execveat;

#ifdef HP_STATIC
extern void __real__exit(int);
extern void __real__Exit(int);
extern int __real_execve(const char *, char *const[], char *const[]);
extern int __real_execv(const char *, char *const[]);
extern int __real_execvp(const char *, char *const[]);
extern int __real_execvpe(const char *, char *const[], char *const[]);
extern int __real_fexecve(int, char *const[], char *const[]);
extern int __real_execveat(int, const char *, char *const[], char *const[], int);
#define NEXT(type, name)          \
	if (!next_##name)         \
	next_##name = __real_##name
#else
#define NEXT(type, name)          \
	if (!next_##name)         \
	next_##name = (type)hp_attach_next(#name)
#endif

void hp_interpose_exit_resolve(void)
{
	NEXT(exit_fn, _exit);
	NEXT(exit_fn, _Exit);
	NEXT(execve_fn, execve);
	NEXT(execv_fn, execv);
	NEXT(execv_fn, execvp);
	NEXT(execve_fn, execvpe);
	NEXT(fexecve_fn, fexecve);
	NEXT(execveat_fn, execveat);
}


static __attribute__((noreturn)) void end(exit_fn next, int status)
{
	if (next)
		next(status);
	for (;;)
		hp_os_exit_group(status);
}

void HP_ENTRY(_exit)(int status)
{
	NEXT(exit_fn, _exit);
	hp_record_exit_now();
	end(next__exit, status);
}

void HP_ENTRY(_Exit)(int status)
{
	NEXT(exit_fn, _Exit);
	hp_record_exit_now();
	end(next__Exit, status);
}


int HP_ENTRY(execve)(const char *path, char *const argv[], char *const envp[])
{
	NEXT(execve_fn, execve);
	hp_record_exec();
	return next_execve(path, argv, hp_record_exec_env(envp));
}

int HP_ENTRY(execv)(const char *path, char *const argv[])
{
	NEXT(execv_fn, execv);
	hp_record_exec();
	return next_execv(path, argv);
}

int HP_ENTRY(execvp)(const char *file, char *const argv[])
{
	NEXT(execv_fn, execvp);
	hp_record_exec();
	return next_execvp(file, argv);
}

int HP_ENTRY(execvpe)(const char *file, char *const argv[], char *const envp[])
{
	NEXT(execve_fn, execvpe);
	hp_record_exec();
	return next_execvpe(file, argv, hp_record_exec_env(envp));
}

int HP_ENTRY(fexecve)(int fd, char *const argv[], char *const envp[])
{
	NEXT(fexecve_fn, fexecve);
	hp_record_exec();
	return next_fexecve(fd, argv, hp_record_exec_env(envp));
}

int HP_ENTRY(execveat)(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	NEXT(execveat_fn, execveat);
	hp_record_exec();
	return next_execveat(dirfd, path, argv, hp_record_exec_env(envp), flags);
}

/* The list forms gather their arguments as glibc does (on the stack) and
 * go through the vector forms above, which write the snapshot: through
 * hidden aliases (HP_ALIAS_OF), which bind here even when the library was
 * loaded by heapprof attach. */
static __typeof__(HP_ENTRY(execv)) own_execv
	__attribute__((alias(HP_ALIAS_OF(HP_ENTRY(execv))), copy(HP_ENTRY(execv))));
static __typeof__(HP_ENTRY(execvp)) own_execvp
	__attribute__((alias(HP_ALIAS_OF(HP_ENTRY(execvp))), copy(HP_ENTRY(execvp))));
static __typeof__(HP_ENTRY(execve)) own_execve
	__attribute__((alias(HP_ALIAS_OF(HP_ENTRY(execve))), copy(HP_ENTRY(execve))));

#define GATHER(first, ap, argv)                                         \
	size_t n = 1;                                                   \
	va_start(ap, first);                                            \
	while (va_arg(ap, const char *))                                \
		n++;                                                    \
	va_end(ap);                                                     \
	const char *argv[n + 1];                                        \
	argv[0] = first;                                                \
	va_start(ap, first);                                            \
	for (size_t i = 1; i <= n; i++)                                 \
		argv[i] = va_arg(ap, const char *)

int HP_ENTRY(execl)(const char *path, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	va_end(ap);
	return own_execv(path, (char *const *)argv);
}

int HP_ENTRY(execlp)(const char *file, const char *arg, ...)
{
	va_list ap;
	GATHER(arg, ap, argv);
	va_end(ap);
	return own_execvp(file, (char *const *)argv);
}

int HP_ENTRY(execle)(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	GATHER(arg, ap, argv);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return own_execve(path, (char *const *)argv, envp);
}
