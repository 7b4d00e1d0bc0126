/* libmicrohttpd gives each connection its own thread and limits idle time, connections and
 * memory; it has no deadline for a whole request (a client sending a byte per second is never
 * idle). So the front thread here accepts, hands each connection to MHD and keeps a duplicate of
 * its descriptor: past metrics_timeout it shuts the connection down through that duplicate
 * (MHD's thread then sees the end of the stream). The duplicate is ours, so its number is never
 * another socket's, whenever MHD closes its own; MHD's own descriptor is never touched once
 * handed over (another thread closes it, and its number may then be reused): MHD's connection
 * notices (MHD_OPTION_NOTIFY_CONNECTION) say when it is done with a connection. Every response
 * closes its connection, which makes the deadline one per request. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon_log.h"
#include "roceswd_http.h"

#define MAX_CONNECTIONS 32
#define MEMORY_LIMIT (32u << 10) /* per connection: request line, headers, buffers */
#define TICK_MS 100

/* One connection, from accept() until MHD's CLOSED notice; under rsw_http.lock. */
struct conn_slot {
	int fd;        /* MHD's descriptor number, -1: free slot; matched only by STARTED */
	int dup;       /* ours, on the same socket */
	uint8_t started; /* MHD's STARTED notice came: its CLOSED notice frees the slot */
	uint8_t cut;     /* shut down at the deadline */
	double opened;
};

struct rsw_http {
	struct MHD_Daemon *mhd;
	rsw_http_render_fn render;
	void *arg;
	double deadline;
	int listen_fd, wake[2];
	pthread_t front;
	pthread_mutex_t lock; /* cut, slot[] */
	uint64_t cut;
	struct conn_slot slot[MAX_CONNECTIONS];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void free_slot(struct conn_slot *s)
{
	close(s->dup);
	s->fd = -1;
}

static void take(struct rsw_http *h, int fd, struct sockaddr *sa, socklen_t salen)
{
	struct conn_slot *s = NULL;
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < MAX_CONNECTIONS && !s; i++)
		if (h->slot[i].fd < 0)
			s = &h->slot[i];
	int dup = s ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (dup < 0) {
		pthread_mutex_unlock(&h->lock);
		close(fd); /* every slot taken: the connection limit */
		return;
	}
	*s = (struct conn_slot){.fd = fd, .dup = dup, .opened = now_s()};
	pthread_mutex_unlock(&h->lock);
	if (MHD_add_connection(h->mhd, fd, sa, salen) != MHD_YES) {
		/* MHD closed fd; a connection it had started is freed by its CLOSED notice */
		pthread_mutex_lock(&h->lock);
		if (!s->started)
			free_slot(s);
		pthread_mutex_unlock(&h->lock);
	}
}

/* MHD's notices: a connection it took (the slot of its descriptor that has not started yet),
 * and one it is done with. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct rsw_http *h = cls;
	pthread_mutex_lock(&h->lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (size_t i = 0; ci && i < MAX_CONNECTIONS; i++)
			if (h->slot[i].fd == ci->connect_fd && !h->slot[i].started) {
				h->slot[i].started = 1;
				*socket_context = &h->slot[i];
				break;
			}
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		free_slot(*socket_context);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&h->lock);
}

/* Shuts down the connections past the deadline (through our duplicate). */
static void reap(struct rsw_http *h)
{
	double now = now_s();
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < MAX_CONNECTIONS; i++) {
		struct conn_slot *s = &h->slot[i];
		if (s->fd < 0 || s->cut || now - s->opened <= h->deadline)
			continue;
		shutdown(s->dup, SHUT_RDWR);
		s->cut = 1;
		h->cut++;
	}
	pthread_mutex_unlock(&h->lock);
}

static void *front(void *arg)
{
	struct rsw_http *h = arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = h->listen_fd, .events = POLLIN},
				      {.fd = h->wake[0], .events = POLLIN}};
		poll(p, 2, TICK_MS);
		if (p[1].revents)
			break;
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd;
		while ((fd = accept4(h->listen_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC)) >= 0) {
			take(h, fd, (struct sockaddr *)&ss, len);
			len = sizeof(ss);
		}
		reap(h);
	}
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *allow,
			     char *body, size_t len)
{
	struct MHD_Response *r =
		body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE) : NULL;
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8"
						      : "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *allow,
				  const char *s)
{
	return reply(c, status, allow, strdup(s), strlen(s));
}

/* GET and HEAD of /metrics (MHD leaves out the body of a HEAD answer, keeping its length). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_len, void **req_ctx)
{
	struct rsw_http *h = cls;
	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req_ctx;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET, HEAD",
				  "only GET and HEAD are served\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, NULL, "only /metrics is served\n");
	pthread_mutex_lock(&h->lock);
	uint64_t cut = h->cut;
	pthread_mutex_unlock(&h->lock);
	size_t len = 0;
	char *body = h->render(h->arg, cut, &len);
	if (!body)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory\n");
	return reply(c, MHD_HTTP_OK, NULL, body, len);
}

static int listen_on(const struct rsw_daemon_cfg *cfg)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, cfg->metrics_address, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)cfg->metrics_port);
	} else if (inet_pton(AF_INET6, cfg->metrics_address, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)cfg->metrics_port);
	} else {
		errno = EINVAL;
		return -1;
	}
	int one = 1, fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, ss.ss_family == AF_INET ? sizeof(*a4) : sizeof(*a6)) <
		    0 ||
	    listen(fd, 64) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct rsw_http *rsw_http_start(const struct rsw_daemon_cfg *cfg, rsw_http_render_fn render,
				void *arg)
{
	struct rsw_http *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->render = render;
	h->arg = arg;
	h->deadline = cfg->metrics_timeout;
	h->wake[0] = h->wake[1] = -1;
	for (size_t i = 0; i < MAX_CONNECTIONS; i++)
		h->slot[i].fd = -1;
	pthread_mutex_init(&h->lock, NULL);
	h->listen_fd = listen_on(cfg);
	if (h->listen_fd < 0) {
		rsw_log(LOG_ERR, "metrics on %s port %u: %s", cfg->metrics_address, cfg->metrics_port,
			strerror(errno));
		rsw_http_stop(h);
		return NULL;
	}
	/* Each connection's thread would take a glibc arena of its own as scrapes overlap (up to 8
	 * per core, each keeping its top pages): RSS then climbs in steps to a plateau that says
	 * nothing about leaks. A request's allocations are small and few: one arena suffices. */
	if (!mallopt(M_ARENA_MAX, 1))
		rsw_log(LOG_WARNING, "metrics: cannot limit malloc arenas");
	h->mhd = MHD_start_daemon(
		MHD_USE_NO_LISTEN_SOCKET | MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC | MHD_USE_POLL,
		0, NULL, NULL, on_request, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_LIMIT,
		MHD_OPTION_CONNECTION_TIMEOUT, cfg->metrics_timeout, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, h, MHD_OPTION_END);
	if (!h->mhd || pipe2(h->wake, O_CLOEXEC) < 0 || pthread_create(&h->front, NULL, front, h)) {
		rsw_log(LOG_ERR, "metrics: cannot start the HTTP server");
		if (h->wake[0] >= 0)
			close(h->wake[0]), close(h->wake[1]);
		h->wake[0] = -1;
		rsw_http_stop(h);
		return NULL;
	}
	rsw_log(LOG_INFO, "metrics on http://%s%s%s:%u/metrics (a connection may last %u s)",
		strchr(cfg->metrics_address, ':') ? "[" : "", cfg->metrics_address,
		strchr(cfg->metrics_address, ':') ? "]" : "", cfg->metrics_port, cfg->metrics_timeout);
	return h;
}

void rsw_http_stop(struct rsw_http *h)
{
	if (!h)
		return;
	if (h->wake[0] >= 0) {
		if (write(h->wake[1], "x", 1) != 1)
			rsw_log(LOG_WARNING, "metrics: cannot wake the front thread");
		pthread_join(h->front, NULL);
		close(h->wake[0]);
		close(h->wake[1]);
	}
	if (h->mhd)
		MHD_stop_daemon(h->mhd); /* its CLOSED notices free the slots of its connections */
	for (size_t i = 0; i < MAX_CONNECTIONS; i++)
		if (h->slot[i].fd >= 0)
			free_slot(&h->slot[i]);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
