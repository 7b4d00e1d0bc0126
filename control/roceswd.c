/* roceswd --config F: the control daemon. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ctl_client.h"
#include "daemon_log.h"
#include "dataplane/tables/state_diff.h"
#include "roceswd.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: roceswd --config F [--attach SOCKET] [--dataplane PATH] [--foreground]\n"
		"               [--syslog]\n"
		"\n"
		"The control daemon: validates switch config F, starts rocesw-dataplane with the EAL\n"
		"arguments, control socket and ports of F (its ROCESWD table, docs/roceswd.md), and\n"
		"keeps it programmed: on SIGHUP or when F changes it reloads F as the difference to the\n"
		"running tables in one transaction (an invalid F is refused and logged; the running\n"
		"config keeps forwarding); a dataplane that exits is restarted and reprogrammed. With\n"
		"ROCESWD metrics_port it serves Prometheus metrics on 127.0.0.1:PORT/metrics.\n"
		"\n"
		"  --attach SOCKET  program a dataplane already running with that control socket\n"
		"                   (no start, no restart)\n"
		"  --dataplane PATH the rocesw-dataplane binary (default: ROCESWD dataplane, else the\n"
		"                   one next to roceswd)\n"
		"  --foreground     stay in the foreground, log to stderr (for service managers);\n"
		"                   otherwise roceswd detaches and logs to syslog\n"
		"  --syslog         log to syslog (LOG_DAEMON) even in the foreground\n");
}

/* The config compiled and built into tables: refuses what the dataplane would refuse. */
static int validate(const char *path, char *err, size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	struct rsw_state *s = NULL;
	int ok = txn && rsw_config_compile(path, txn, err, errlen) == 0 &&
		 (s = rsw_state_from_txn(txn, err, errlen)) != NULL;
	if (!txn)
		snprintf(err, errlen, "out of memory");
	rsw_state_free(s);
	rsw_txn_free(txn);
	return ok ? 0 : -1;
}

static int copy_file(const char *from, const char *to)
{
	char tmp[PATH_MAX + 8], buf[65536];
	snprintf(tmp, sizeof(tmp), "%s.new", to);
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	if (in >= 0)
		out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto done;
	if (out >= 0 && n == 0 && fsync(out) == 0 && rename(tmp, to) == 0)
		rc = 0;
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (rc < 0 && out >= 0)
		unlink(tmp); /* no half-written copy left behind */
	return rc;
}

/* Validates the user's config and has the dataplane apply it as a difference; on success keeps
 * a copy, from which a restarted dataplane starts. */
static void reload(struct roceswd *d, const char *why)
{
	char err[2048];
	rsw_log(LOG_INFO, "reload (%s): %s", why, d->config);
	if (validate(d->config, err, sizeof(err)) < 0) {
		d->stats.reloads_failed++;
		rsw_log(LOG_ERR, "reload refused, the running config stays: %s", err);
		return;
	}
	json_t *r = rsw_ctl_call(d->cfg.control_socket,
				 json_pack("{s:s, s:s}", "op", "reload", "config", d->config), err,
				 sizeof(err));
	if (!r) {
		d->stats.reloads_failed++;
		rsw_log(LOG_ERR, "reload refused by the dataplane, the running config stays: %s", err);
		return;
	}
	if (copy_file(d->config, d->running) < 0)
		rsw_log(LOG_WARNING, "cannot copy %s to %s: a restarted dataplane would start from "
			"the previous config", d->config, d->running);
	d->stats.reloads_ok++;
	rsw_log(LOG_NOTICE, "reloaded: %lld table writes, generation %lld",
		(long long)json_integer_value(json_object_get(r, "writes")),
		(long long)json_integer_value(json_object_get(r, "generation")));
	json_decref(r);
}

static int metrics_open(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 8) < 0) {
		rsw_log(LOG_ERR, "metrics on 127.0.0.1:%u: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rsw_log(LOG_INFO, "metrics on http://127.0.0.1:%u/metrics", port);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* One HTTP/1.0-style exchange: GET /metrics, or 404; at most 8 KiB of request, 2 s. */
static void metrics_serve(struct roceswd *d, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	char req[8192];
	size_t got = 0;
	while (got < sizeof(req) - 1) {
		ssize_t n = recv(fd, req + got, sizeof(req) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = 0;
	if (strncmp(req, "GET /metrics ", 13) && strncmp(req, "GET /metrics?", 13)) {
		static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
					 "Content-Length: 31\r\nConnection: close\r\n\r\n"
					 "only GET /metrics is served\r\n\r\n";
		send_all(fd, nf, sizeof(nf) - 1);
		close(fd);
		return;
	}
	char err[512];
	json_t *c = rsw_ctl_call(d->cfg.control_socket,
				 json_pack("{s:s, s:s}", "op", "show", "what", "counters"), err,
				 sizeof(err));
	size_t len = 0;
	char *body = rsw_prom_render(c, &d->stats, &len);
	json_decref(c);
	char hdr[256];
	int hl = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
			  "version=0.0.4\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", len);
	send_all(fd, hdr, (size_t)hl);
	if (body)
		send_all(fd, body, len);
	free(body);
	close(fd);
}

/* Editors replace files: watch the directory for the config's name. */
static int watch_config(const char *path, char *base, size_t len)
{
	char dir[PATH_MAX], b[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	snprintf(base, len, "%s", basename(b));
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0 &&
	    inotify_add_watch(fd, dirname(dir), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int config_changed(int ifd, const char *base)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int hit = 0;
	ssize_t n;
	while ((n = read(ifd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)(void *)p;
			if (e->len && !strcmp(e->name, base))
				hit = 1;
			p += sizeof(*e) + e->len;
		}
	return hit;
}

static int setup(struct roceswd *d, const char *config, const char *attach, const char *dp_arg,
		 const char *argv0)
{
	char err[2048];
	if (!realpath(config, d->config)) {
		fprintf(stderr, "roceswd: %s: %s\n", config, strerror(errno));
		return -1;
	}
	if (validate(d->config, err, sizeof(err)) < 0 ||
	    rsw_config_roceswd(d->config, &d->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (attach)
		snprintf(d->cfg.control_socket, sizeof(d->cfg.control_socket), "%s", attach);
	d->attach = attach != NULL;
	char self[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	snprintf(dir, sizeof(dir), "%s", n > 0 ? self : argv0);
	if (dp_arg)
		snprintf(d->dataplane, sizeof(d->dataplane), "%s", dp_arg);
	else if (d->cfg.dataplane[0])
		snprintf(d->dataplane, sizeof(d->dataplane), "%s", d->cfg.dataplane);
	else
		snprintf(d->dataplane, sizeof(d->dataplane), "%s/rocesw-dataplane", dirname(dir));
	/* the running copy lives beside the control socket (e.g. /run/rocesw/) */
	char sdir[sizeof(d->cfg.control_socket)];
	snprintf(sdir, sizeof(sdir), "%s", d->cfg.control_socket);
	const char *rundir = dirname(sdir);
	if (mkdir(rundir, 0750) < 0 && errno != EEXIST) {
		fprintf(stderr, "roceswd: %s: %s\n", rundir, strerror(errno));
		return -1;
	}
	snprintf(d->running, sizeof(d->running), "%s/running-config.yaml", rundir);
	if (copy_file(d->config, d->running) < 0) {
		fprintf(stderr, "roceswd: cannot write %s\n", d->running);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"attach", required_argument, NULL, 'a'},
		{"dataplane", required_argument, NULL, 'd'}, {"foreground", no_argument, NULL, 'f'},
		{"syslog", no_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *attach = NULL, *dp_arg = NULL;
	int foreground = 0, use_syslog = 0, c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'a': attach = optarg; break;
		case 'd': dp_arg = optarg; break;
		case 'f': foreground = 1; break;
		case 's': use_syslog = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("roceswd %s\n", RSW_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!config || optind < argc) {
		usage(stderr);
		return 2;
	}
	static struct roceswd d;
	if (setup(&d, config, attach, dp_arg, argv[0]) < 0)
		return 1;
	if (!foreground && daemon(1, 0) < 0) {
		perror("roceswd: daemon");
		return 1;
	}
	rsw_log_open("roceswd", use_syslog || !foreground);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	char base[256];
	int ifd = watch_config(d.config, base, sizeof(base));
	if (sfd < 0 || ifd < 0) {
		rsw_log(LOG_ERR, "cannot watch signals or %s: %s", d.config, strerror(errno));
		return 1;
	}
	if (d.attach) {
		if (rsw_child_wait_ready(&d, 30) < 0)
			return 1;
		reload(&d, "attach");
	} else if (rsw_child_start(&d) < 0) {
		rsw_child_stop(&d);
		return 1;
	}
	int mfd = d.cfg.metrics_port ? metrics_open(d.cfg.metrics_port) : -1;
	rsw_log(LOG_NOTICE, "running: config %s, dataplane socket %s", d.config,
		d.cfg.control_socket);
	while (!d.stopping) {
		struct pollfd p[3] = {{.fd = sfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN},
				      {.fd = mfd, .events = POLLIN}};
		if (poll(p, mfd >= 0 ? 3 : 2, 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					reload(&d, "SIGHUP");
				else if (si.ssi_signo == SIGCHLD && !d.attach)
					rsw_child_reap(&d);
				else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					d.stopping = 1;
			}
		}
		if ((p[1].revents & POLLIN) && config_changed(ifd, base)) {
			usleep(200000); /* let a writer finish */
			config_changed(ifd, base);
			reload(&d, "file changed");
		}
		if (mfd >= 0 && (p[2].revents & POLLIN))
			metrics_serve(&d, mfd);
	}
	rsw_log(LOG_NOTICE, "stopping");
	if (!d.attach)
		rsw_child_stop(&d);
	return 0;
}
