#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"

#define MAX_REPLY (4u << 20)

const char *rsw_ctl_socket_path(const char *arg)
{
	if (arg)
		return arg;
	const char *env = getenv("ROCESW_SOCKET");
	return env && *env ? env : RSW_CTL_DEFAULT_SOCKET;
}

int rsw_ctl_send_fds(const char *path, json_t *req, const int *fds, unsigned n_fds, char *err,
		     size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -1;
	}
	if (n_fds > RSW_CTL_CLIENT_MAX_FDS) {
		snprintf(err, errlen, "%u files in one request; at most %d", n_fds,
			 RSW_CTL_CLIENT_MAX_FDS);
		return -1;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(err, errlen, "%s: %s (is rocesw-dataplane running with --control-socket?)",
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	json_object_set_new(req, "v", json_integer(1));
	char *text = json_dumps(req, JSON_COMPACT);
	struct iovec iov = {.iov_base = text, .iov_len = text ? strlen(text) : 0};
	/* files travel open, as SCM_RIGHTS beside the request: the dataplane reads them with the
	 * rights this process had when it opened them */
	union {
		char buf[CMSG_SPACE(sizeof(int) * RSW_CTL_CLIENT_MAX_FDS)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	if (n_fds) {
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	/* EPIPE: the dataplane turned this client away (busy, refused) before the request went;
	 * its reason is waiting to be read */
	if (!text || (sendmsg(fd, &m, MSG_NOSIGNAL) < 0 && errno != EPIPE)) {
		snprintf(err, errlen, "%s: %s", path, text ? strerror(errno) : "out of memory");
		close(fd);
		fd = -1;
	}
	free(text);
	return fd;
}

int rsw_ctl_send(const char *path, json_t *req, int pass_fd, char *err, size_t errlen)
{
	return rsw_ctl_send_fds(path, req, &pass_fd, pass_fd >= 0, err, errlen);
}

int rsw_ctl_send_reload(const char *path, const char *file, const char *name, char *err,
			size_t errlen)
{
	/* opened as the caller, without blocking on a FIFO; the dataplane fstat()s what it gets
	 * and reads only a regular file */
	int cfd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (cfd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", name, strerror(errno));
		return -1;
	}
	json_t *req = json_pack("{s:s, s:[s]}", "op", "reload", "files", name);
	int fd = req ? rsw_ctl_send(path, req, cfd, err, errlen) : -1;
	if (!req)
		snprintf(err, errlen, "out of memory");
	json_decref(req);
	close(cfd); /* the message holds its own reference until the dataplane takes it */
	return fd;
}

json_t *rsw_ctl_recv(int fd, const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char *buf = NULL;
	json_t *result = NULL;
	ssize_t n = -1;
	int ready = poll(&p, 1, timeout_ms);
	if (ready == 0)
		errno = ETIMEDOUT;
	if (ready > 0 && (buf = malloc(MAX_REPLY + 1))) {
		n = recv(fd, buf, MAX_REPLY, MSG_DONTWAIT);
		/* turned away with the request unread, the socket reports the reset first and
		 * the reason after it */
		if (n < 0 && errno == ECONNRESET)
			n = recv(fd, buf, MAX_REPLY, MSG_DONTWAIT);
	}
	if (n <= 0) {
		snprintf(err, errlen, "%s: %s", path, n == 0 ? "the dataplane closed the connection"
							     : strerror(errno));
	} else {
		json_error_t je;
		json_t *reply = json_loadb(buf, (size_t)n, 0, &je);
		if (!reply) {
			snprintf(err, errlen, "%s: reply is not JSON: %s", path, je.text);
		} else if (!json_is_true(json_object_get(reply, "ok"))) {
			const char *e = json_string_value(json_object_get(reply, "error"));
			snprintf(err, errlen, "%s", e ? e : "error without a message");
		} else {
			result = json_incref(json_object_get(reply, "result"));
		}
		json_decref(reply);
	}
	free(buf);
	close(fd);
	return result;
}

json_t *rsw_ctl_call(const char *path, json_t *req, char *err, size_t errlen)
{
	int fd = rsw_ctl_send(path, req, -1, err, errlen);
	return fd < 0 ? NULL : rsw_ctl_recv(fd, path, 30000, err, errlen);
}
