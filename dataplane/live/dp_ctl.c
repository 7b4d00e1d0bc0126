#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sys/acl.h>

#include "dp_ctl.h"

static int resolve_group(const char *g, gid_t *out)
{
	char *end;
	unsigned long v = strtoul(g, &end, 10);
	if (*g && !*end) {
		*out = (gid_t)v;
		return 0;
	}
	struct group *gr = getgrnam(g);
	if (!gr)
		return -1;
	*out = gr->gr_gid;
	return 0;
}

/* The read-only group may connect too: a POSIX ACL entry beside the file's own group (a socket
 * is connected to by whoever may write it). */
static int allow_readonly_group(const char *file, gid_t g)
{
	char text[128];
	snprintf(text, sizeof(text), "u::rw-,g::rw-,g:%u:rw-,m::rw-,o::---", (unsigned)g);
	acl_t acl = acl_from_text(text);
	int rc = acl ? acl_set_file(file, ACL_TYPE_ACCESS, acl) : -1;
	if (acl)
		acl_free(acl);
	return rc;
}

int rsw_ctl_open(struct rsw_ctl *c, struct rsw_dp *dp, const char *path, const char *group,
		 const char *ro_group, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->listen_fd = -1;
	c->dp = dp;
	c->group = c->ro_group = (gid_t)-1;
	c->idle_s = RSW_CTL_IDLE_S;
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		c->client[i] = -1;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "--control-socket %s: longer than %zu bytes", path,
			 sizeof(a.sun_path) - 1);
		return -1;
	}
	if (group && resolve_group(group, &c->group) < 0) {
		snprintf(err, errlen, "--control-group %s: no such group", group);
		return -1;
	}
	if (ro_group && resolve_group(ro_group, &c->ro_group) < 0) {
		snprintf(err, errlen, "--control-readonly-group %s: no such group", ro_group);
		return -1;
	}
	c->buf = malloc(RSW_CTL_MAX_REQUEST + 1);
	if (!c->buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* bound and listening under a temporary name, then renamed into place: the path appears
	 * only once a client can connect to it (who waits for the file is never refused) */
	char tmp[sizeof(a.sun_path) + 32];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	const char *bound = strlen(tmp) < sizeof(a.sun_path) ? tmp : path;
	strcpy(a.sun_path, bound);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct stat st;
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			/* the rename below would replace it: never clobber what is not a socket */
			snprintf(err, errlen, "--control-socket %s: exists and is not a socket", path);
			close(c->listen_fd);
			c->listen_fd = -1;
			free(c->buf);
			c->buf = NULL;
			return -1;
		}
		unlink(path); /* a socket left by a dataplane that died */
	}
	unlink(tmp);
	/* created 0660 from the start: no moment at which others could connect */
	mode_t old = umask(0117);
	int rc = c->listen_fd < 0 ? -1 : bind(c->listen_fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	int made = rc == 0; /* the file exists: removed if a later step fails */
	const char *why = "";
	if (rc == 0)
		rc = listen(c->listen_fd, RSW_CTL_BACKLOG);
	if (rc == 0 && c->group != (gid_t)-1)
		rc = chown(bound, (uid_t)-1, c->group);
	if (rc == 0 && c->ro_group != (gid_t)-1) {
		rc = allow_readonly_group(bound, c->ro_group);
		if (rc)
			why = " (the read-only group's access needs POSIX ACLs on its file system)";
	}
	if (rc == 0 && bound != path)
		rc = rename(bound, path);
	if (rc < 0) {
		snprintf(err, errlen, "--control-socket %s: %s%s", path, strerror(errno), why);
		if (made && bound != path)
			unlink(bound); /* the temporary name (rsw_ctl_close removes path) */
		rsw_ctl_close(c);
		return -1;
	}
	return 0;
}

void rsw_ctl_close(struct rsw_ctl *c)
{
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		if (c->client[i] >= 0)
			close(c->client[i]);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		unlink(c->path);
	}
	free(c->buf);
	c->buf = NULL;
	c->listen_fd = -1;
}

/* Is the peer a member (primary or supplementary, as the user database says) of group g? */
static int peer_in_group(const struct ucred *cr, gid_t g)
{
	if (g == (gid_t)-1)
		return 0;
	if (cr->gid == g)
		return 1;
	struct passwd *pw = getpwuid(cr->uid);
	gid_t groups[256];
	int n = 256;
	if (pw && getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) >= 0)
		for (int i = 0; i < n; i++)
			if (groups[i] == g)
				return 1;
	return 0;
}

/* Root, our own user, or a member of the control group; else, read-only, a member of the
 * read-only group. */
static int peer_allowed(const struct rsw_ctl *c, int fd, struct rsw_ctl_peer *peer, char *why,
			size_t len)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) < 0) {
		snprintf(why, len, "cannot read the peer's credentials");
		return 0;
	}
	*peer = (struct rsw_ctl_peer){.uid = cr.uid, .gid = cr.gid, .pid = cr.pid};
	if (cr.uid == 0 || cr.uid == geteuid() || peer_in_group(&cr, c->group))
		return 1;
	if (peer_in_group(&cr, c->ro_group)) {
		peer->readonly = 1;
		return 1;
	}
	snprintf(why, len, "peer uid %u is not root and not in the control group%s",
		 (unsigned)cr.uid, c->ro_group != (gid_t)-1 ? " nor the read-only group" : "");
	return 0;
}

static void drop_client(struct rsw_ctl *c, unsigned i)
{
	close(c->client[i]);
	c->client[i] = -1;
}

static json_t *error_reply(json_t *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *error_reply(json_t *id, const char *fmt, ...)
{
	char msg[RSW_CTL_MAX_ERROR];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:i, s:O?, s:b, s:s}", "v", RSW_CTL_PROTOCOL, "id", id, "ok", 0, "error",
			 msg);
}

static char *dump_and_free(json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	return text;
}

/* Sends a reply without waiting: a client that does not read its replies is dropped. */
static void send_reply(struct rsw_ctl *c, unsigned i, json_t *reply)
{
	json_t *id = json_object_get(reply, "id");
	char *text = json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text && strlen(text) > RSW_CTL_MAX_REPLY) {
		free(text);
		text = dump_and_free(error_reply(id, "reply larger than the 4 MiB limit"));
	}
	ssize_t rc = text ? send(c->client[i], text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) : -1;
	if (rc < 0 && text && errno == EMSGSIZE) {
		/* more than this connection's send buffer can ever hold: said, not a silent hang-up
		 * (without CAP_NET_ADMIN, as with --user, the buffer cannot be forced above
		 * net.core.wmem_max) */
		int sb = 0;
		socklen_t sl = sizeof(sb);
		getsockopt(c->client[i], SOL_SOCKET, SO_SNDBUF, &sb, &sl);
		size_t len = strlen(text);
		free(text);
		text = dump_and_free(error_reply(id, "reply of %zu bytes is larger than this "
						 "connection's send buffer (%d bytes; raise "
						 "net.core.wmem_max)", len, sb));
		rc = text ? send(c->client[i], text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) : -1;
	}
	if (rc < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EMSGSIZE)
			c->stats.slow_clients++;
		drop_client(c, i);
	}
	free(text);
}

/* An error reply to a connection that gets no slot, then closed: the client reads why. */
static void turn_away(int fd, const char *why)
{
	json_t *r = error_reply(NULL, "%s", why);
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	if (text)
		(void)!send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
	free(text);
	json_decref(r);
	close(fd);
}

/* For SOCK_SEQPACKET, recv() returns 0 both for an empty message and at the end: the peer's
 * hang-up tells them apart. */
static int peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The descriptors of the message's SCM_RIGHTS, kept for the request (the rest closed). */
static void take_fds(struct rsw_ctl *c, struct msghdr *mh)
{
	c->n_req_fd = 0;
	c->req_fd_truncated = !!(mh->msg_flags & MSG_CTRUNC);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t k = 0; k < n; k++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (c->n_req_fd < RSW_CTL_MAX_FDS)
				c->req_fd[c->n_req_fd++] = fd;
			else {
				close(fd);
				c->req_fd_truncated = 1;
			}
		}
	}
}

static void close_fds(struct rsw_ctl *c)
{
	for (unsigned k = 0; k < c->n_req_fd; k++)
		close(c->req_fd[k]);
	c->n_req_fd = 0;
	c->req_fd_truncated = 0;
}

static json_t *handle_message(struct rsw_ctl *c, unsigned i, ssize_t n)
{
	if (n > RSW_CTL_MAX_REQUEST) {
		c->stats.oversized++;
		return error_reply(NULL, "request of %zd bytes exceeds the limit of %d", n,
				   RSW_CTL_MAX_REQUEST);
	}
	if (n == 0)
		return error_reply(NULL, "empty request: send one JSON object per message, like "
				   "{\"v\": 1, \"op\": \"hello\"}");
	json_error_t je;
	json_t *reply, *req = json_loadb(c->buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	json_t *id = req ? json_object_get(req, "id") : NULL;
	json_t *v = req ? json_object_get(req, "v") : NULL;
	const char *op = req ? json_string_value(json_object_get(req, "op")) : NULL;
	if (!req)
		reply = error_reply(NULL, "not JSON: %s at byte %d", je.text, je.position);
	else if (!json_is_object(req))
		reply = error_reply(NULL, "a request is a JSON object");
	else if (!json_is_integer(v) || json_integer_value(v) != RSW_CTL_PROTOCOL)
		reply = error_reply(id, "protocol version: expected \"v\": %d", RSW_CTL_PROTOCOL);
	else if (!op)
		reply = error_reply(id, "missing \"op\"");
	else {
		static char err[RSW_CTL_MAX_ERROR]; /* the main lcore's alone */
		err[0] = 0;
		c->req_peer = &c->peer[i];
		json_t *result = NULL;
		if (c->peer[i].readonly && rsw_ctl_op_changes(op)) {
			snprintf(err, sizeof(err), "%.64s changes the switch: uid %u is in the "
				 "read-only control group (hello, show, hash_explain and trace_show only)",
				 op, (unsigned)c->peer[i].uid);
			rsw_ctl_log_change(c, op, req, NULL, err);
		} else {
			result = rsw_ctl_dispatch(c, op, req, err, sizeof(err));
		}
		if (result && !strcmp(op, "hello") && json_is_object(result))
			json_object_set_new(result, "access", json_string(c->peer[i].readonly
									  ? "read-only"
									  : "read-write"));
		c->req_peer = NULL;
		reply = result ? json_pack("{s:i, s:O?, s:b, s:o}", "v", RSW_CTL_PROTOCOL, "id", id,
					   "ok", 1, "result", result)
			       : error_reply(id, "%s", err);
		if (!result && c->req_errors)
			json_object_set(reply, "errors", c->req_errors);
		json_decref(c->req_errors);
		c->req_errors = NULL;
	}
	json_decref(req);
	return reply;
}

static void serve(struct rsw_ctl *c, unsigned i)
{
	c->last_seen[i] = time(NULL);
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * RSW_CTL_MAX_FDS)];
	} cbuf;
	struct iovec iov = {.iov_base = c->buf, .iov_len = RSW_CTL_MAX_REQUEST + 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.b,
			    .msg_controllen = sizeof(cbuf.b)};
	ssize_t n = recvmsg(c->client[i], &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			drop_client(c, i);
		return;
	}
	take_fds(c, &mh);
	if (n == 0 && !c->n_req_fd && peer_gone(c->client[i])) {
		drop_client(c, i);
		return;
	}
	c->stats.requests++;
	json_t *reply = handle_message(c, i, n);
	close_fds(c);
	if (json_is_false(json_object_get(reply, "ok")))
		c->stats.errors++;
	send_reply(c, i, reply);
	json_decref(reply);
}

/* Frees the slots of peers that hung up, answering (to no one) what they sent before: a burst of
 * clients that send and close without reading must not hold the slots until their turn. */
static unsigned reap_hung_up(struct rsw_ctl *c)
{
	struct pollfd p[RSW_CTL_MAX_CLIENTS];
	unsigned map[RSW_CTL_MAX_CLIENTS], n = 0, freed = 0;
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		if (c->client[i] >= 0) {
			map[n] = i;
			p[n++] = (struct pollfd){.fd = c->client[i], .events = POLLIN | POLLRDHUP};
		}
	if (poll(p, n, 0) <= 0)
		return 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = map[k];
		if (!(p[k].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			continue;
		/* its queued requests are served as they would have been; the reply fails and
		 * drops it, or the end of its messages does */
		for (unsigned m = 0; m < 64 && c->client[i] >= 0; m++)
			serve(c, i);
		if (c->client[i] >= 0)
			drop_client(c, i);
		c->stats.hung_up++;
		freed++;
	}
	return freed;
}

static int free_slot(struct rsw_ctl *c)
{
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		if (c->client[i] < 0)
			return (int)i;
	return -1;
}

static void accept_clients(struct rsw_ctl *c)
{
	int fd;
	while ((fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		char why[128];
		struct rsw_ctl_peer peer;
		if (!peer_allowed(c, fd, &peer, why, sizeof(why))) {
			c->stats.refused_peers++;
			char msg[160];
			snprintf(msg, sizeof(msg), "refused: %s", why);
			turn_away(fd, msg);
			continue;
		}
		int i = free_slot(c);
		if (i < 0 && reap_hung_up(c))
			i = free_slot(c);
		if (i < 0) {
			c->stats.too_many_clients++;
			char msg[160];
			snprintf(msg, sizeof(msg), "busy: %u clients connected, the most served at once; "
				 "try again", RSW_CTL_MAX_CLIENTS);
			turn_away(fd, msg);
			continue;
		}
		/* replies up to the limit fit in one message: CAP_NET_ADMIN may force the buffer
		 * there; without it (--user), it goes as far as net.core.wmem_max allows */
		int sz = (int)RSW_CTL_MAX_REPLY + 4096;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		c->client[i] = fd;
		c->peer[i] = peer;
		c->last_seen[i] = time(NULL);
	}
}

void rsw_ctl_poll(struct rsw_ctl *c, int timeout_ms)
{
	/* a client that holds a slot without a word is let go: slots are few */
	time_t now = time(NULL);
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		if (c->client[i] >= 0 && now - c->last_seen[i] > (time_t)c->idle_s) {
			c->stats.idle_clients++;
			drop_client(c, i);
		}

	struct pollfd p[RSW_CTL_MAX_CLIENTS + 1];
	unsigned map[RSW_CTL_MAX_CLIENTS + 1], n = 0;
	p[n++] = (struct pollfd){.fd = c->listen_fd, .events = POLLIN};
	for (unsigned i = 0; i < RSW_CTL_MAX_CLIENTS; i++)
		if (c->client[i] >= 0) {
			map[n] = i;
			p[n++] = (struct pollfd){.fd = c->client[i], .events = POLLIN};
		}
	if (poll(p, n, timeout_ms) <= 0)
		return;
	/* the connected clients first: what they sent frees their slots for the newcomers */
	for (unsigned k = 1; k < n; k++)
		if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
			serve(c, map[k]);
	if (p[0].revents & POLLIN)
		accept_clients(c);
}
