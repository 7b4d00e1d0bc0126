/* roceswd --config F: the control daemon. One loop (signals, the config's directory, the reload
 * in flight, the adopted dataplane's pidfd, timers) that never waits on a client: metrics are
 * served from libmicrohttpd's threads, and the dataplane's answer to a reload, however long it
 * takes, is awaited in the loop. */
#include <errno.h>
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

#include "ctl_client.h"
#include "daemon_log.h"
#include "dataplane/config/whole_file.h"
#include "dataplane/config/zone.h"
#include "roceswd_child.h"
#include "roceswd_drop.h"
#include "roceswd_reload.h"
#include "roceswd_validate.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: roceswd --config F | --zone Z [--attach SOCKET] [--dataplane PATH]\n"
		"               [--foreground] [--syslog]\n"
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
		"reports readiness and pings the watchdog. With ROCESWD user it runs as that user\n"
		"once started, without capabilities; a launcher it forks while still root starts\n"
		"and stops the dataplane (docs/security.md \"roceswd's privileges\").\n"
		"\n"
		"  --zone Z         a zone file (docs/replay.md; its ROCESWD table as above): one\n"
		"                   rocesw-dataplane --zone runs every switch; a reload applies each\n"
		"                   switch's difference in one zone-wide transaction, all switches or\n"
		"                   none (a refused switch changes nothing anywhere); a change of\n"
		"                   switches, hosts or links needs a restart. --config Z of a zone\n"
		"                   file (it has a ZONE table) does the same\n"
		"  --attach SOCKET  program a dataplane already running with that control socket\n"
		"                   (no start, no restart)\n"
		"  --dataplane PATH the rocesw-dataplane binary (default: ROCESWD dataplane, else the\n"
		"                   one next to roceswd)\n"
		"  --foreground     stay in the foreground, log to stderr (for service managers);\n"
		"                   otherwise roceswd detaches and logs to syslog\n"
		"  --syslog         log to syslog (LOG_DAEMON) even in the foreground\n");
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
	s.switch_generation = json_deep_copy(d->stats.switch_generation); /* the loop replaces it */
	pthread_mutex_unlock(&d->lock);
	s.http_cut = cut;
	char *body = rsw_prom_render(c, &s, len);
	json_decref(s.switch_generation);
	json_decref(c);
	return body;
}

/* With ROCESWD user: roceswd's own copies go to RUNDIR/roceswd/, the user's (roceswd writes
 * them once it runs as the user); a dataplane started as root reads only root's boot copy in
 * RUNDIR, made while roceswd is still root. Returns the copies' directory, or NULL (said). */
static const char *user_dir(struct roceswd *d, const char *rundir, char *out, size_t len)
{
	char err[512];
	uid_t uid;
	gid_t gid;
	if (rsw_daemon_user(d->cfg.user, &uid, &gid, err, sizeof(err)) < 0) {
		fprintf(stderr, "roceswd: %s\n", err);
		return NULL;
	}
	/* the user must reach RUNDIR/roceswd and the control socket: a directory of root's that
	 * only root may enter gets the user's group (0750: its group reads, never writes) */
	struct stat st;
	if (stat(rundir, &st) < 0) {
		fprintf(stderr, "roceswd: %s: %s\n", rundir, strerror(errno));
		return NULL;
	}
	if (!(st.st_mode & S_IXOTH) && st.st_gid != gid) {
		if (st.st_uid != 0 || st.st_gid != 0 || lchown(rundir, (uid_t)-1, gid) < 0 ||
		    chmod(rundir, (st.st_mode & 07777) | S_IRGRP | S_IXGRP) < 0) {
			fprintf(stderr, "roceswd: %s: user %s cannot enter it (mode %o, uid %u, "
				"gid %u): give it the user's group\n", rundir, d->cfg.user,
				(unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
				(unsigned)st.st_gid);
			return NULL;
		}
	}
	if (snprintf(out, len, "%s/roceswd", rundir) >= (int)len) {
		fprintf(stderr, "roceswd: %s: too long a path\n", rundir);
		return NULL;
	}
	/* chmod first: once it is the user's, root without CAP_FOWNER may not (the unit) */
	if ((mkdir(out, 0700) < 0 && errno != EEXIST) || lstat(out, &st) < 0 ||
	    (st.st_uid == 0 && chmod(out, 0700) < 0) || lchown(out, uid, gid) < 0) {
		fprintf(stderr, "roceswd: %s: %s\n", out, strerror(errno));
		return NULL;
	}
	return out;
}

/* The rocesw-dataplane binary: --dataplane, else ROCESWD dataplane, else the one beside us. */
static void dataplane_path(struct roceswd *d, const char *dp_arg, const char *argv0)
{
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
}

/* One config: the running copy and its next in copies, root's boot copy in rundir (made now
 * when a launcher will start the dataplane from it). */
static int config_copies(struct roceswd *d, const char *rundir, const char *copies, int launcher)
{
	char err[2048];
	int n[] = {snprintf(d->running, sizeof(d->running), "%s/running-config.yaml", copies),
		   snprintf(d->next, sizeof(d->next), "%s/running-config.yaml.next", copies),
		   snprintf(d->boot, sizeof(d->boot), "%s/boot-config.yaml", rundir)};
	if (n[0] >= (int)sizeof(d->running) || n[1] >= (int)sizeof(d->next) ||
	    n[2] >= (int)sizeof(d->boot)) {
		fprintf(stderr, "roceswd: %s or %s: path too long for the config's copies\n",
			copies, rundir);
		return -1;
	}
	if (launcher && rsw_file_copy_whole(d->config, d->boot, 0600, err, sizeof(err)) < 0) {
		fprintf(stderr, "roceswd: %s\n", err);
		return -1;
	}
	return 0;
}

/* A zone: the running, next and boot snapshot directories, then every switch checked, every
 * error of each said, before anything starts; with a launcher the snapshot is root's boot copy
 * (roceswd takes its own once it is the user). */
static int zone_copies(struct roceswd *d, const char *rundir, const char *copies, int launcher)
{
	char err[2048];
	if (snprintf(d->running_dir, sizeof(d->running_dir), "%s/running-zone", copies) >=
		    (int)sizeof(d->running_dir) ||
	    snprintf(d->next_dir, sizeof(d->next_dir), "%s/running-zone.next", copies) >=
		    (int)sizeof(d->next_dir) ||
	    snprintf(d->boot_dir, sizeof(d->boot_dir), "%s/boot-zone", rundir) >=
		    (int)sizeof(d->boot_dir) ||
	    snprintf(d->running, sizeof(d->running), "%s/zone.yaml", d->running_dir) >=
		    (int)sizeof(d->running) ||
	    snprintf(d->boot, sizeof(d->boot), "%s/zone.yaml", d->boot_dir) >=
		    (int)sizeof(d->boot) ||
	    snprintf(d->next, sizeof(d->next), "%s/zone.yaml", d->next_dir) >= (int)sizeof(d->next)) {
		fprintf(stderr, "roceswd: %s: the control socket's directory is too long a path\n",
			rundir);
		return -1;
	}
	const char *snap = launcher ? d->boot_dir : d->next_dir;
	if (rsw_zsnap_take(d->config, snap, &d->snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (rsw_zsnap_validate(&d->snap, "refusing to start")) {
		rsw_zsnap_remove(snap);
		return -1;
	}
	return 0;
}

/* Before anything runs: the config checked, the dataplane's binary, the run directory and the
 * copies' paths. Errors go to stderr. */
static int setup(struct roceswd *d, const char *config, int zone, const char *attach,
		 const char *dp_arg, const char *argv0)
{
	char err[2048];
	if (!realpath(config, d->config)) {
		fprintf(stderr, "roceswd: %s: %s\n", config, strerror(errno));
		return -1;
	}
	/* --config of a zone file is --zone: the file says what it is */
	d->zone = zone || rsw_zone_detect(d->config, err, sizeof(err)) == 1;
	if ((!d->zone && rsw_validate(d->config, d->config, err, sizeof(err)) < 0) ||
	    rsw_config_roceswd(d->config, &d->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (attach)
		snprintf(d->cfg.control_socket, sizeof(d->cfg.control_socket), "%s", attach);
	d->attach = attach != NULL;
	dataplane_path(d, dp_arg, argv0);
	/* the running copy lives beside the control socket (e.g. /run/rocesw/) */
	char sdir[sizeof(d->cfg.control_socket)], udir[PATH_MAX];
	snprintf(sdir, sizeof(sdir), "%s", d->cfg.control_socket);
	const char *rundir = dirname(sdir), *copies = rundir;
	/* 0751 whatever the umask (the unit's is 0077): clients pass through to the control
	 * socket, which decides (docs/security.md) */
	if (mkdir(rundir, 0751) == 0) {
		(void)chmod(rundir, 0751);
	} else if (errno != EEXIST) {
		fprintf(stderr, "roceswd: %s: %s\n", rundir, strerror(errno));
		return -1;
	}
	if (d->cfg.user[0] && !(copies = user_dir(d, rundir, udir, sizeof(udir))))
		return -1;
	int launcher = d->cfg.user[0] && !d->attach;
	return d->zone ? zone_copies(d, rundir, copies, launcher)
		       : config_copies(d, rundir, copies, launcher);
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
	if (rsw_child_adopt(d)) {
		if (d->zone)
			rsw_zsnap_remove(d->next_dir); /* the re-attach reload takes its own */
		return 0;
	}
	char err[RSW_DAEMON_MAX_ERROR];
	if (d->zone && d->launcher_fd >= 0) {
		/* root's boot snapshot was checked; the user's copy is taken now, as the user */
		rsw_zsnap_free(&d->snap);
		if (rsw_zsnap_take(d->config, d->next_dir, &d->snap, err, sizeof(err)) < 0) {
			rsw_log(LOG_ERR, "%s", err);
			return -1;
		}
	}
	if (d->zone) {
		if (rsw_zsnap_promote(d->next_dir, d->running_dir) < 0) {
			rsw_log(LOG_ERR, "cannot make %s the running zone: %s", d->next_dir,
				strerror(errno));
			return -1;
		}
		rsw_child_start(d);
		return 0;
	}
	if (rsw_file_copy_whole(d->config, d->running, 0600, err, sizeof(err)) < 0) {
		rsw_log(LOG_ERR, "%s", err);
		return -1;
	}
	rsw_child_start(d);
	return 0;
}

/* With ROCESWD user: the launcher forked (root, for the dataplane's starts), then roceswd
 * becomes the user for good. Returns 0 or -1 (logged). */
static int privileges(struct roceswd *d)
{
	char err[512];
	d->launcher_fd = -1;
	if (!d->cfg.user[0])
		return 0;
	if (!d->attach && rsw_child_launcher(d) < 0)
		return -1;
	if (rsw_daemon_drop(d->cfg.user, err, sizeof(err)) < 0) {
		rsw_log(LOG_ERR, "%s", err);
		return -1;
	}
	rsw_log(LOG_NOTICE, "roceswd dropped to %s (uid %d, gid %d): no capabilities", d->cfg.user,
		(int)getuid(), (int)getgid());
	if (d->launcher_fd >= 0)
		rsw_log(LOG_NOTICE, "launcher pid %d starts the dataplane as root from %s",
			(int)d->launcher_pid, d->boot);
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

/* The command line: what to run and how to log. */
struct args {
	const char *config, *attach, *dp_arg;
	int foreground, use_syslog, zone;
};

/* Returns -1 to go on, else the exit status (--help, --version, a usage error). */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"zone", required_argument, NULL, 'z'},
		{"attach", required_argument, NULL, 'a'},
		{"dataplane", required_argument, NULL, 'd'}, {"foreground", no_argument, NULL, 'f'},
		{"syslog", no_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': a->config = optarg; break;
		case 'z': a->config = optarg; a->zone = 1; break;
		case 'a': a->attach = optarg; break;
		case 'd': a->dp_arg = optarg; break;
		case 'f': a->foreground = 1; break;
		case 's': a->use_syslog = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("roceswd %s\n", RSW_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!a->config || optind < argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The signals the loop reads (blocked, then read from a signalfd), and the config's files
 * watched. Returns the signalfd, or -1 (logged). */
static int watch_events(struct roceswd *d)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	char *one[] = {d->config};
	if (rsw_watch_init(&d->watch) == 0 && !d->zone)
		rsw_watch_set(&d->watch, one, 1);
	else if (d->watch.fd >= 0)
		rsw_watch_zone(d, &d->snap);
	if (sfd < 0 || d->watch.fd < 0 || d->watch.n == 0) {
		rsw_log(LOG_ERR, "cannot watch signals or %s: %s", d->config, strerror(errno));
		return -1;
	}
	return sfd;
}

static void read_signals(struct roceswd *d, int sfd)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			rsw_reload_request(d, "SIGHUP");
		else if (si.ssi_signo == SIGCHLD)
			rsw_child_reap(d);
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			d->stopping = 1;
	}
}

/* One turn of the loop: every event ready, then the timers. Returns -1 if poll failed. */
static int loop_once(struct roceswd *d, int sfd)
{
	struct pollfd p[5] = {{.fd = sfd, .events = POLLIN}, {.fd = d->watch.fd, .events = POLLIN},
			      {.fd = d->reload_fd, .events = POLLIN},
			      {.fd = d->own ? -1 : d->pidfd, .events = POLLIN},
			      {.fd = d->launcher_fd, .events = POLLIN}};
	if (poll(p, 5, poll_timeout_ms(d)) < 0 && errno != EINTR)
		return -1;
	/* the launcher's dataplane died (as SIGCHLD tells of roceswd's own child) */
	if (p[4].fd >= 0 && p[4].fd == d->launcher_fd && p[4].revents)
		rsw_child_launcher_event(d);
	if (p[0].revents & POLLIN)
		read_signals(d, sfd);
	/* an adopted dataplane's death (its parent, not us, gets the status) */
	if (p[3].fd >= 0 && p[3].fd == d->pidfd && (p[3].revents & POLLIN))
		rsw_child_died(d, -1);
	/* after deaths: a reload whose dataplane died was aborted there */
	if (p[2].fd >= 0 && p[2].fd == d->reload_fd && p[2].revents)
		rsw_reload_finish(d);
	if ((p[1].revents & POLLIN) && rsw_watch_changed(&d->watch))
		rsw_reload_request(d, "file changed");
	if (d->state == RSW_DP_UP && d->reload_fd < 0 && d->reload_wanted)
		rsw_reload_request(d, d->reload_why);
	rsw_child_tick(d);
	if (d->watchdog_usec && rsw_now() >= d->next_watchdog) {
		sd_notify(0, "WATCHDOG=1");
		d->next_watchdog = rsw_now() + d->watchdog_usec / 2e6;
	}
	return 0;
}

/* Shutdown in the reverse order of start-up. */
static void stop(struct roceswd *d, int sfd)
{
	rsw_log(LOG_NOTICE, "stopping");
	sd_notify(0, "STOPPING=1");
	rsw_http_stop(d->http);
	rsw_reload_abort(d, "roceswd is stopping");
	rsw_child_stop(d);
	close(sfd);
	rsw_watch_close(&d->watch);
	rsw_zsnap_free(&d->snap);
	json_decref(d->stats.switch_generation);
}

/* Start-up in order, the event loop, then shutdown in reverse: the daemon's life. */
int main(int argc, char **argv)
{
	struct args a = {0};
	int status = parse_args(argc, argv, &a);
	if (status >= 0)
		return status;
	static struct roceswd d;
	pthread_mutex_init(&d.lock, NULL);
	if (setup(&d, a.config, a.zone, a.attach, a.dp_arg, argv[0]) < 0)
		return 1;
	if (!a.foreground && daemon(1, 0) < 0) {
		perror("roceswd: daemon");
		return 1;
	}
	rsw_log_open("roceswd", a.use_syslog || !a.foreground);
	int sfd = watch_events(&d);
	if (sfd < 0)
		return 1;
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	if (privileges(&d) < 0 || first_dataplane(&d) < 0)
		return 1;
	if (d.cfg.metrics_port && !(d.http = rsw_http_start(&d.cfg, scrape, &d))) {
		rsw_child_stop(&d);
		return 1;
	}
	rsw_log(LOG_NOTICE, "running: %s %s, dataplane socket %s%s", d.zone ? "zone" : "config",
		d.config, d.cfg.control_socket, d.watchdog_usec ? ", systemd watchdog on" : "");
	while (!d.stopping && loop_once(&d, sfd) == 0)
		;
	stop(&d, sfd);
	return d.failed; /* systemd's Restart=on-failure starts roceswd again */
}
