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

#include "dataplane/config/config.h"
#include "dataplane/config/whole_file.h"
#include "ctl_client.h"
#include "daemon_log.h"
#include "dataplane/tables/state_diff.h"
#include "roceswd.h"
#include "roceswd_drop.h"
#include "dataplane/config/zone.h"

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

/* The config compiled and built into tables: refuses what the dataplane would refuse. */
int rsw_validate(const char *path, const char *name, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	struct rsw_txn *txn = rsw_txn_new();
	struct rsw_state *s = NULL;
	int ok = txn && rsw_config_compile_fd(fd, name, txn, err, errlen) == 0 &&
		 (s = rsw_state_from_txn(txn, err, errlen)) != NULL;
	if (!txn)
		snprintf(err, errlen, "out of memory");
	rsw_state_free(s);
	rsw_txn_free(txn);
	close(fd);
	return ok ? 0 : -1;
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

/* A zone's {SWITCH: {"generation": G, ...}} (hello, reload) into the metrics. */
static void set_generations(struct roceswd *d, json_t *sws)
{
	json_t *g = json_object(), *v;
	const char *k;
	json_object_foreach(sws, k, v)
		json_object_set_new(g, k, json_integer(json_integer_value(json_object_get(v,
								"generation"))));
	pthread_mutex_lock(&d->lock);
	json_decref(d->stats.switch_generation);
	d->stats.switch_generation = g;
	pthread_mutex_unlock(&d->lock);
}

/* Every file of the zone is watched: the zone file and each switch's config. */
static void watch_zone(struct roceswd *d, const struct rsw_zsnap *s)
{
	char **paths = calloc(s->n + 1, sizeof(*paths));
	if (!paths)
		return;
	paths[0] = d->config;
	for (unsigned i = 0; i < s->n; i++)
		paths[i + 1] = s->src[i];
	if (rsw_watch_set(&d->watch, paths, s->n + 1) < 0)
		rsw_log(LOG_ERR, "cannot watch the zone's files: %s; SIGHUP still reloads",
			strerror(errno));
	free(paths);
}

/* A zone's reload: the zone file and every switch config snapshot together, the topology
 * compared with the running zone's, every switch checked (every error of every switch logged),
 * then one request for the whole zone. Returns the socket awaiting the answer, or -1 (logged). */
static int zone_reload_send(struct roceswd *d)
{
	char err[RSW_DAEMON_MAX_ERROR];
	struct rsw_zsnap run;
	rsw_zsnap_free(&d->snap);
	if (rsw_zsnap_take(d->config, d->next_dir, &d->snap, err, sizeof(err)) < 0) {
		rsw_log(LOG_ERR, "reload refused, no switch changed: %s", err);
		return -1;
	}
	watch_zone(d, &d->snap);
	/* without a running snapshot (adopted from elsewhere) the dataplane checks the switches */
	if (rsw_zsnap_read(d->running, &run, err, sizeof(err)) == 0) {
		int same = rsw_zsnap_same_topology(&run, &d->snap, err, sizeof(err));
		rsw_zsnap_free(&run);
		if (same < 0) {
			rsw_log(LOG_ERR, "reload refused, no switch changed: %s", err);
			return -1;
		}
	}
	if (rsw_zsnap_validate(&d->snap, "reload refused"))
		return -1;
	int fd = rsw_zsnap_send_reload(&d->snap, d->cfg.control_socket, err, sizeof(err));
	if (fd < 0)
		rsw_log(LOG_ERR, "reload not sent, no switch changed: %s", err);
	return fd;
}

/* The dataplane's answer to a zone's reload: every switch's generation and writes, or its
 * refusal (one line per error of each refused switch). */
static void zone_reload_finish(struct roceswd *d, json_t *r, char *err, double took)
{
	if (!r) {
		reload_done(d, 0);
		rsw_zsnap_remove(d->next_dir);
		for (char *save, *line = strtok_r(err, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			rsw_log(LOG_ERR, "reload not applied (%.2f s): %s", took, line);
		rsw_log(LOG_ERR, "the running zone stays on every switch");
		return;
	}
	if (rsw_zsnap_promote(d->next_dir, d->running_dir) < 0)
		rsw_log(LOG_ERR, "cannot make %s the running zone: %s: a restarted dataplane would "
			"start from the previous one", d->next_dir, strerror(errno));
	json_t *sws = json_object_get(r, "switches"), *v;
	const char *k;
	json_object_foreach(sws, k, v) {
		long long w = (long long)json_integer_value(json_object_get(v, "writes"));
		rsw_log(LOG_NOTICE, "reloaded: switch %s: %lld table writes, generation %lld%s", k, w,
			(long long)json_integer_value(json_object_get(v, "generation")),
			w ? "" : " (unchanged: no transaction)");
	}
	set_generations(d, sws);
	reload_done(d, 1);
	rsw_log(LOG_NOTICE, "reloaded: zone %s: %lld table writes on %zu switches, in %.2f s",
		json_string_value(json_object_get(r, "zone")),
		(long long)json_integer_value(json_object_get(r, "writes")), json_object_size(sws),
		took);
	json_decref(r);
}

/* Sends the reload: a snapshot of the user's config (so a file edited meanwhile cannot change
 * what is applied), validated first. The answer is read by reload_finish from the loop. */
static void reload_send(struct roceswd *d)
{
	char err[2048];
	d->reload_wanted = 0;
	rsw_log(LOG_INFO, "reload (%s): %s", d->reload_why, d->config);
	if (d->zone) {
		d->reload_fd = zone_reload_send(d);
		if (d->reload_fd < 0) {
			reload_done(d, 0);
			rsw_zsnap_remove(d->next_dir);
			return;
		}
		goto sent;
	}
	if (rsw_file_copy_whole(d->config, d->next, 0600, err, sizeof(err)) < 0) {
		reload_done(d, 0);
		rsw_log(LOG_ERR, "reload refused, the running config stays: %s", err);
		return;
	}
	if (rsw_validate(d->next, d->next, err, sizeof(err)) < 0) {
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
sent:
	d->reload_sent = rsw_now();
	pthread_mutex_lock(&d->lock);
	d->stats.reload_in_progress = 1;
	pthread_mutex_unlock(&d->lock);
	rsw_log(LOG_INFO, "reload sent to the dataplane, awaiting its answer");
}

/* A dataplane the launcher started runs the boot copy (root's, made at roceswd's start): the
 * running copy, which roceswd (not root) wrote, reaches it as any reload does, passed open to a
 * dataplane that already runs as the user. Ports cannot change by reload, so what a root
 * process opened is always what the boot copy says. */
static void restore_send(struct roceswd *d)
{
	char err[2048];
	d->restore = 0;
	if (d->zone) {
		struct rsw_zsnap s;
		d->reload_fd = -1;
		if (rsw_zsnap_read(d->running, &s, err, sizeof(err)) == 0) {
			for (unsigned i = 0; i < s.n; i++)
				s.copy[i] = strdup(s.src[i]);
			d->reload_fd = rsw_zsnap_send_reload(&s, d->cfg.control_socket, err,
							     sizeof(err));
			rsw_zsnap_free(&s);
		}
	} else {
		d->reload_fd = rsw_ctl_send_reload(d->cfg.control_socket, d->running, d->running,
						   err, sizeof(err));
	}
	if (d->reload_fd < 0) {
		rsw_log(LOG_ERR, "cannot restore the running copy %s: %s; the dataplane runs %s, "
			"the config roceswd started with (SIGHUP reloads)", d->running, err, d->boot);
		return;
	}
	d->restoring = 1;
	d->reload_sent = rsw_now();
	rsw_log(LOG_INFO, "restoring the running copy %s (the dataplane started from %s)",
		d->running, d->boot);
}

static void restore_finish(struct roceswd *d, json_t *r, const char *err, double took)
{
	d->restoring = 0;
	if (!r) {
		rsw_log(LOG_ERR, "running copy not restored (%.2f s): %s; the dataplane runs %s, the "
			"config roceswd started with (SIGHUP reloads)", took, err, d->boot);
		return;
	}
	if (d->zone)
		set_generations(d, json_object_get(r, "switches"));
	else
		set_stat(d, &d->stats.generation,
			 (uint64_t)json_integer_value(json_object_get(r, "generation")));
	rsw_log(LOG_NOTICE, "running copy restored: %lld table writes, in %.2f s",
		(long long)json_integer_value(json_object_get(r, "writes")), took);
	json_decref(r);
}

/* The dataplane's answer: applied at a generation (the snapshot becomes running-config), or
 * refused with its reason. */
static void reload_finish(struct roceswd *d)
{
	char err[RSW_DAEMON_MAX_ERROR];
	json_t *r = rsw_ctl_recv(d->reload_fd, d->cfg.control_socket, 0, err, sizeof(err));
	d->reload_fd = -1;
	double took = rsw_now() - d->reload_sent;
	if (d->restoring) {
		restore_finish(d, r, err, took);
		return;
	}
	if (d->zone) {
		zone_reload_finish(d, r, err, took);
		return;
	}
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
	if (d->restoring) {
		d->restoring = 0;
		rsw_log(LOG_ERR, "running copy not restored (%s)", why);
		return;
	}
	if (d->zone)
		rsw_zsnap_remove(d->next_dir);
	else
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
	/* a zone's hello gives every switch's generation; one switch's config its own */
	json_t *req = d->zone ? json_pack("{s:s}", "op", "hello")
			      : json_pack("{s:s, s:s}", "op", "show", "what", "config");
	json_t *c = rsw_ctl_call(d->cfg.control_socket, req, err, sizeof(err));
	json_decref(req);
	if (c && d->zone)
		set_generations(d, json_object_get(c, "switches"));
	else if (c)
		set_stat(d, &d->stats.generation,
			 (uint64_t)json_integer_value(json_object_get(c, "generation")));
	json_decref(c);
	if (!d->own && !d->ready_told) {
		snprintf(d->reload_why, sizeof(d->reload_why), "re-attach");
		d->reload_wanted = 1;
	}
	if (d->restore)
		restore_send(d);
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
	if (!d->zone) {
		snprintf(d->running, sizeof(d->running), "%s/running-config.yaml", copies);
		snprintf(d->next, sizeof(d->next), "%s/running-config.yaml.next", copies);
		snprintf(d->boot, sizeof(d->boot), "%s/boot-config.yaml", rundir);
		if (launcher && rsw_file_copy_whole(d->config, d->boot, 0600, err, sizeof(err)) < 0) {
			fprintf(stderr, "roceswd: %s\n", err);
			return -1;
		}
		return 0;
	}
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
	/* every switch checked, every error of each said, before anything starts; with a
	 * launcher the snapshot is root's boot copy (roceswd takes its own once it is the user) */
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

/* One piece: start-up in order, the event loop, then shutdown in reverse: the daemon's life. */
int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"zone", required_argument, NULL, 'z'},
		{"attach", required_argument, NULL, 'a'},
		{"dataplane", required_argument, NULL, 'd'}, {"foreground", no_argument, NULL, 'f'},
		{"syslog", no_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *attach = NULL, *dp_arg = NULL;
	int foreground = 0, use_syslog = 0, zone = 0, c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'z': config = optarg; zone = 1; break;
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
	if (setup(&d, config, zone, attach, dp_arg, argv[0]) < 0)
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
	char *one[] = {d.config};
	if (rsw_watch_init(&d.watch) == 0 && !d.zone)
		rsw_watch_set(&d.watch, one, 1);
	else if (d.watch.fd >= 0)
		watch_zone(&d, &d.snap);
	int ifd = d.watch.fd;
	if (sfd < 0 || ifd < 0 || d.watch.n == 0) {
		rsw_log(LOG_ERR, "cannot watch signals or %s: %s", d.config, strerror(errno));
		return 1;
	}
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
	while (!d.stopping) {
		struct pollfd p[5] = {{.fd = sfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN},
				      {.fd = d.reload_fd, .events = POLLIN},
				      {.fd = d.own ? -1 : d.pidfd, .events = POLLIN},
				      {.fd = d.launcher_fd, .events = POLLIN}};
		if (poll(p, 5, poll_timeout_ms(&d)) < 0 && errno != EINTR)
			break;
		/* the launcher's dataplane died (as SIGCHLD tells of roceswd's own child) */
		if (p[4].fd >= 0 && p[4].fd == d.launcher_fd && p[4].revents)
			rsw_child_launcher_event(&d);
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
		if ((p[1].revents & POLLIN) && rsw_watch_changed(&d.watch))
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
	rsw_watch_close(&d.watch);
	rsw_zsnap_free(&d.snap);
	json_decref(d.stats.switch_generation);
	return d.failed; /* systemd's Restart=on-failure starts roceswd again */
}
