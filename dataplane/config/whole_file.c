#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "whole_file.h"

#define COPY_MAX (512u << 20)

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The temporary beside path, opened for writing: its fd, or -1 with errno set (tmp holds its
 * name either way). */
static int open_tmp(const char *path, mode_t mode, char tmp[PATH_MAX])
{
	if (snprintf(tmp, PATH_MAX, "%s.tmp.%ld", path, (long)getpid()) >= PATH_MAX) {
		tmp[0] = 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
}

/* The temporary written (ok) or not: made durable and renamed over path, or removed. Returns 0,
 * or -1 with err saying why. fd is closed. */
static int finish_tmp(int fd, int ok, const char *tmp, const char *path, char *err,
		      size_t errlen)
{
	int e = ok ? 0 : errno;
	if (!e && fd >= 0 && fsync(fd) < 0)
		e = errno;
	if (fd >= 0 && close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) < 0)
		e = errno;
	if (!e)
		return 0;
	if (tmp[0])
		unlink(tmp); /* no partial file left, under any name */
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
	errno = e;
	return -1;
}

int rsw_file_write_whole(const char *path, const void *data, size_t len, mode_t mode,
			 char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	int fd = open_tmp(path, mode, tmp);
	return finish_tmp(fd, fd >= 0 && write_all(fd, data, len) == 0, tmp, path, err, errlen);
}

/* jansson's output as it is made, through a buffer of its own: a whole document in memory
 * first (json_dumps) is tens of MB at zone scale, grown by copies and paid for in page faults. */
struct dump_sink {
	int fd, failed;
	size_t n;
	char buf[1u << 16];
};

static int sink_flush(struct dump_sink *s)
{
	if (!s->failed && s->n && write_all(s->fd, s->buf, s->n) < 0)
		s->failed = 1;
	s->n = 0;
	return s->failed ? -1 : 0;
}

static int sink_put(const char *data, size_t size, void *arg)
{
	struct dump_sink *s = arg;
	if (s->n + size > sizeof(s->buf) && sink_flush(s) < 0)
		return -1;
	if (size > sizeof(s->buf))
		return write_all(s->fd, data, size) < 0 ? (s->failed = 1, -1) : 0;
	memcpy(s->buf + s->n, data, size);
	s->n += size;
	return 0;
}

int rsw_json_write_whole(const json_t *j, const char *path, size_t flags, char *err,
			 size_t errlen)
{
	char tmp[PATH_MAX];
	struct dump_sink *s = malloc(sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	s->fd = open_tmp(path, 0666, tmp);
	s->failed = 0;
	s->n = 0;
	int ok = s->fd >= 0 && json_dump_callback(j, sink_put, s, flags) == 0 && sink_flush(s) == 0;
	if (!ok && s->fd >= 0 && !s->failed)
		errno = ENOMEM; /* jansson's own failure: it fails only for memory */
	int rc = finish_tmp(s->fd, ok, tmp, path, err, errlen);
	free(s);
	return rc;
}

int rsw_file_copy_whole(const char *from, const char *to, mode_t mode, char *err,
			size_t errlen)
{
	int fd = open(from, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read %s: %s", from, strerror(errno));
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if ((unsigned long long)st.st_size > COPY_MAX)
		why = "larger than 512 MiB";
	size_t len = why ? 0 : (size_t)st.st_size, got = 0;
	char *buf = why ? NULL : malloc(len ? len : 1);
	if (!why && !buf)
		why = "out of memory";
	while (!why && got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			why = strerror(errno);
		else if (n == 0)
			why = "shorter than when it was opened";
		else
			got += (size_t)n;
	}
	close(fd);
	if (why) {
		snprintf(err, errlen, "cannot read %s: %s", from, why);
		free(buf);
		return -1;
	}
	int rc = rsw_file_write_whole(to, buf, len, mode, err, errlen);
	free(buf);
	return rc;
}
