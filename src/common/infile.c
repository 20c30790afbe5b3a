/*
 * infile.c - inputs opened without blocking (see infile.h).
 */
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not regular is, for a message. */
static const char *kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory, not a regular file";
	if (S_ISFIFO(mode))
		return "is a FIFO, not a regular file";
	if (S_ISSOCK(mode))
		return "is a socket, not a regular file";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "is a device, not a regular file";
	return "is not a regular file";
}

int hp_infile_open(const char *path, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err;
	struct stat st;

	*why = NULL;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*why = kind(st.st_mode);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}
