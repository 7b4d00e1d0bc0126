/* roceswd --config F: the control daemon. One loop (signals, the config's directory, the reload
 * in flight, the adopted dataplane's pidfd, timers) that never waits on a client: metrics are
 * served from libmicrohttpd's threads, and the dataplane's answer to a reload, however long it
 * takes, is awaited in the loop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

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
		"config keeps forwarding); a dataplane that dies is restarted with backoff (0.5 s\n"
		"doubling to 30 s) from the last config it applied. A dataplane already answering on\n"
		"the control socket (left by a roceswd that was restarted) is re-attached, not\n"
		"replaced. With ROCESWD metrics_port it serves Prometheus metrics on\n"
		"metrics_address (default 127.0.0.1):PORT/metrics. Under systemd (NOTIFY_SOCKET) it\n"
		"reports readiness and pings the watchdog.\n"
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

int rsw_copy_file(const char *from, const char *to)
{
	char tmp[PATH_MAX + 8], buf[65536];
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
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

static void set_stat(struct roceswd *d, uint64_t *field, uint64_t value)
{
	pthread_mutex_lock(&d->lock);
	*field = value;
	pthread_mutex_unlock(&d->lock);
}

static void reload_done(struct roceswd *d, int ok)
{
	pthread_mutex_lock(&d->lock);
	if (ok)
		d->stats.reloads_ok++;
	else
		d->stats.reloads_failed++;
	d->stats.reload_in_progress = 0;
	pthread_mutex_unlock(&d->lock);
}

/* Sends the reload: a snapshot of the user's config (so a file edited meanwhile cannot change
 * what is applied), validated first. The answer is read by reload_finish from the loop. */
static void reload_send(struct roceswd *d)
{
	char err[2048];
	d->reload_wanted = 0;
	rsw_log(LOG_INFO, "reload (%s): %s", d->reload_why, d->config);
	if (rsw_copy_file(d->config, d->next) < 0) {
		reload_done(d, 0);
		rsw_log(LOG_ERR, "reload refused, the running config stays: cannot read %s: %s",
			d->config, strerror(errno));
		return;
	}
	if (validate(d->next, err, sizeof(err)) < 0) {
		reload_done(d, 0);
		rsw_log(LOG_ERR, "reload refused, the running config stays: %s", err);
		return;
	}
	/* the snapshot travels open (SCM_RIGHTS): the dataplane opens no path for a client */
	d->reload_fd = rsw_ctl_send_reload(d->cfg.control_socket, d->next, d->config, err,
					   sizeof(err));
	if (d->reload_fd < 0) {
		reload_done(d, 0);
		rsw_log(LOG_ERR, "reload not sent, the running config stays: %s", err);
		return;
	}
	d->reload_sent = rsw_now();
	pthread_mutex_lock(&d->lock);
	d->stats.reload_in_progress = 1;
	pthread_mutex_unlock(&d->lock);
	rsw_log(LOG_INFO, "reload sent to the dataplane, awaiting its answer");
}

/* The dataplane's answer: applied at a generation (the snapshot becomes running-config), or
 * refused with its reason. */
static void reload_finish(struct roceswd *d)
{
	char err[2048];
	json_t *r = rsw_ctl_recv(d->reload_fd, d->cfg.control_socket, 0, err, sizeof(err));
	d->reload_fd = -1;
	double took = rsw_now() - d->reload_sent;
	if (!r) {
		reload_done(d, 0);
		unlink(d->next);
		/* refused with the dataplane's reason, or its connection closed without an
		 * answer: the dataplane died with it (its tables too; a restart starts from
		 * running-config), so either way the reload is not applied */
		rsw_log(LOG_ERR, "reload not applied (%.2f s): %s; the running config stays", took,
			err);
		return;
	}
	long long gen = (long long)json_integer_value(json_object_get(r, "generation"));
	if (rename(d->next, d->running) < 0)
		rsw_log(LOG_ERR, "cannot rename %s to %s: %s: a restarted dataplane would start "
			"from the previous config", d->next, d->running, strerror(errno));
	set_stat(d, &d->stats.generation, (uint64_t)gen);
	reload_done(d, 1);
	rsw_log(LOG_NOTICE, "reloaded: %lld table writes, generation %lld, in %.2f s",
		(long long)json_integer_value(json_object_get(r, "writes")), gen, took);
	json_decref(r);
}

void rsw_reload_abort(struct roceswd *d, const char *why)
{
	if (d->reload_fd < 0)
		return;
	close(d->reload_fd);
	d->reload_fd = -1;
	unlink(d->next);
	reload_done(d, 0);
	rsw_log(LOG_ERR, "reload not applied (%s): the running config stays, a restarted dataplane "
		"starts from %s; send SIGHUP to retry", why, d->running);
}

void rsw_reload_request(struct roceswd *d, const char *why)
{
	if (why != d->reload_why)
		snprintf(d->reload_why, sizeof(d->reload_why), "%s", why);
	if (d->state != RSW_DP_UP || d->reload_fd >= 0) {
		/* one reload at a time; the file is read when it is sent, so one is enough */
		if (!d->reload_wanted)
			rsw_log(LOG_INFO, "reload (%s) queued until the %s", why,
				d->reload_fd >= 0 ? "reload in flight is answered"
						  : "dataplane answers");
		d->reload_wanted = 1;
		return;
	}
	reload_send(d);
}

static void notify(struct roceswd *d, const char *state)
{
	(void)d;
	sd_notify(0, state);
}

/* The dataplane answers: started from running-config, or adopted (whose tables we program with
 * the user's config now). */
void rsw_dataplane_ready(struct roceswd *d)
{
	char err[512];
	json_t *req = json_pack("{s:s, s:s}", "op", "show", "what", "config");
	json_t *c = rsw_ctl_call(d->cfg.control_socket, req, err, sizeof(err));
	json_decref(req);
	if (c)
		set_stat(d, &d->stats.generation,
			 (uint64_t)json_integer_value(json_object_get(c, "generation")));
	json_decref(c);
	if (!d->own && !d->ready_told) {
		snprintf(d->reload_why, sizeof(d->reload_why), "re-attach");
		d->reload_wanted = 1;
	}
	if (!d->ready_told) {
		d->ready_told = 1;
		notify(d, "READY=1\nSTATUS=dataplane answering");
	} else {
		notify(d, "STATUS=dataplane answering");
	}
	if (d->reload_wanted)
		rsw_reload_request(d, d->reload_why);
}

/* A scrape, in a metrics connection's thread: the dataplane's counters (waiting at most half
 * the connection's deadline for them) and the daemon's own. */
static char *scrape(void *arg, uint64_t cut, size_t *len)
{
	struct roceswd *d = arg;
	char err[512];
	json_t *req = json_pack("{s:s, s:s}", "op", "show", "what", "counters");
	int fd = rsw_ctl_send(d->cfg.control_socket, req, -1, err, sizeof(err));
	json_decref(req);
	json_t *c = fd < 0 ? NULL : rsw_ctl_recv(fd, d->cfg.control_socket,
						 (int)d->cfg.metrics_timeout * 500, err, sizeof(err));
	struct rsw_prom_daemon s;
	pthread_mutex_lock(&d->lock);
	s = d->stats;
	pthread_mutex_unlock(&d->lock);
	s.http_cut = cut;
	char *body = rsw_prom_render(c, &s, len);
	json_decref(c);
	return body;
}

/* Editors replace files: watch the directory for the config's name. A file written in place
 * is read once its writer closes it (IN_CLOSE_WRITE), a replaced one once it is renamed into
 * place (IN_MOVED_TO): never half-written. */
static int watch_config(const char *path, char *base, size_t len)
{
	char dir[PATH_MAX], b[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(b, sizeof(b), "%s", path);
	snprintf(base, len, "%s", basename(b));
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0 && inotify_add_watch(fd, dirname(dir), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
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
	snprintf(d->next, sizeof(d->next), "%s/running-config.yaml.next", rundir);
	return 0;
}

/* The dataplane at startup: the one --attach names, the one a previous roceswd left on the
 * control socket, or a new one from the config (which becomes running-config). */
static int first_dataplane(struct roceswd *d)
{
	d->pidfd = -1;
	d->reload_fd = -1;
	if (d->attach) {
		d->state = RSW_DP_STARTING;
		d->started = d->next_hello = rsw_now();
		return 0;
	}
	if (rsw_child_adopt(d))
		return 0;
	if (rsw_copy_file(d->config, d->running) < 0) {
		rsw_log(LOG_ERR, "cannot write %s: %s", d->running, strerror(errno));
		return -1;
	}
	rsw_child_start(d);
	return 0;
}

/* How long the loop may sleep: until the next timer, at most 1 s. */
static int poll_timeout_ms(const struct roceswd *d)
{
	double now = rsw_now(), next = now + 1;
	if (d->state == RSW_DP_STARTING && d->next_hello < next)
		next = d->next_hello;
	if (d->state == RSW_DP_WAITING && d->due < next)
		next = d->due;
	if (d->watchdog_usec && d->next_watchdog < next)
		next = d->next_watchdog;
	return next <= now ? 0 : (int)((next - now) * 1000) + 1;
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
	pthread_mutex_init(&d.lock, NULL);
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
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	char base[256];
	int ifd = watch_config(d.config, base, sizeof(base));
	if (sfd < 0 || ifd < 0) {
		rsw_log(LOG_ERR, "cannot watch signals or %s: %s", d.config, strerror(errno));
		return 1;
	}
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	if (first_dataplane(&d) < 0)
		return 1;
	if (d.cfg.metrics_port && !(d.http = rsw_http_start(&d.cfg, scrape, &d))) {
		rsw_child_stop(&d);
		return 1;
	}
	rsw_log(LOG_NOTICE, "running: config %s, dataplane socket %s%s", d.config,
		d.cfg.control_socket, d.watchdog_usec ? ", systemd watchdog on" : "");
	while (!d.stopping) {
		struct pollfd p[4] = {{.fd = sfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN},
				      {.fd = d.reload_fd, .events = POLLIN},
				      {.fd = d.own ? -1 : d.pidfd, .events = POLLIN}};
		if (poll(p, 4, poll_timeout_ms(&d)) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP)
					rsw_reload_request(&d, "SIGHUP");
				else if (si.ssi_signo == SIGCHLD)
					rsw_child_reap(&d);
				else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
					d.stopping = 1;
			}
		}
		/* an adopted dataplane's death (its parent, not us, gets the status) */
		if (p[3].fd >= 0 && p[3].fd == d.pidfd && (p[3].revents & POLLIN))
			rsw_child_died(&d, -1);
		/* after deaths: a reload whose dataplane died was aborted there */
		if (p[2].fd >= 0 && p[2].fd == d.reload_fd && p[2].revents)
			reload_finish(&d);
		if ((p[1].revents & POLLIN) && config_changed(ifd, base))
			rsw_reload_request(&d, "file changed");
		if (d.state == RSW_DP_UP && d.reload_fd < 0 && d.reload_wanted)
			rsw_reload_request(&d, d.reload_why);
		rsw_child_tick(&d);
		if (d.watchdog_usec && rsw_now() >= d.next_watchdog) {
			notify(&d, "WATCHDOG=1");
			d.next_watchdog = rsw_now() + d.watchdog_usec / 2e6;
		}
	}
	rsw_log(LOG_NOTICE, "stopping");
	notify(&d, "STOPPING=1");
	rsw_http_stop(d.http);
	rsw_reload_abort(&d, "roceswd is stopping");
	rsw_child_stop(&d);
	close(sfd);
	close(ifd);
	return 0;
}
