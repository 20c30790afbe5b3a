/*
 * infile.h - opening a file the analyzer reads (a capture, a core, a
 * binary a core names, a suppressions file) without ever blocking.
 *
 * open(2) of a FIFO for reading waits for a writer, forever when none
 * comes; of a device, whatever the device does. So every input is opened
 * O_NONBLOCK and kept only when fstat says it is a regular file; its
 * descriptor is then put back to blocking reads (a regular file's reads
 * never wait on another process). Part of the analyzer's toolkit
 * (COMMON_HEAP_SRC): never linked into the recorder.
 */
#ifndef HP_COMMON_INFILE_H
#define HP_COMMON_INFILE_H

/* Opens path read-only, close-on-exec, if it is a regular file. Returns
 * the descriptor, or -errno: -EISDIR for a directory, -EINVAL for anything
 * else that is not a regular file (*why then says what it is: "is a FIFO,
 * not a regular file"); *why is NULL for other errors (strerror says
 * them). Never blocks. */
int hp_infile_open(const char *path, const char **why);

#endif
