/* roceswd's reloads (docs/roceswd.md): the user's config (or zone) snapshot, validated, sent to
 * the dataplane, and its answer awaited from the daemon's loop; the restore of the running copy
 * into a dataplane the launcher started; what the daemon does once the dataplane answers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "ctl_client.h"
#include "daemon_log.h"
#include "dataplane/config/whole_file.h"
#include "roceswd_reload.h"
#include "roceswd_validate.h"

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

void rsw_watch_zone(struct roceswd *d, const struct rsw_zsnap *s)
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
	rsw_watch_zone(d, &d->snap);
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

void rsw_reload_finish(struct roceswd *d)
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
		sd_notify(0, "READY=1\nSTATUS=dataplane answering");
	} else {
		sd_notify(0, "STATUS=dataplane answering");
	}
	if (d->reload_wanted)
		rsw_reload_request(d, d->reload_why);
}
