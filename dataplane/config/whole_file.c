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

int rsw_file_write_whole(const char *path, const void *data, size_t len, mode_t mode,
			 char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	int fd = -1, e = ENAMETOOLONG;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		goto fail;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0)
		goto fail_errno;
	int rc = close(fd);
	fd = -1;
	if (rc < 0 || rename(tmp, path) < 0)
		goto fail_errno;
	return 0;
fail_errno:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp); /* no partial file left, under any name */
fail:
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
	errno = e;
	return -1;
}

int rsw_json_write_whole(const json_t *j, const char *path, size_t flags, char *err,
			 size_t errlen)
{
	char *text = json_dumps(j, flags);
	if (!text) {
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	int rc = rsw_file_write_whole(path, text, strlen(text), 0666, err, errlen);
	free(text);
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
