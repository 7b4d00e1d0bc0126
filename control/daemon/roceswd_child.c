/* roceswd's dataplane process: started with the EAL arguments and control socket of the config's
 * ROCESWD table on the running copy of the config, or adopted from a previous roceswd; every
 * death, whenever it happens (starting, answering, mid-reload), is seen in one place
 * (rsw_child_died) and leads to a restart after a backoff, as systemd's Restart= does. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "daemon_log.h"
#include "roceswd_child.h"
#include "roceswd_reload.h"
#include "roceswd_launcher.h"

#define MAX_ARGS 64
#define HELLO_EVERY_S 0.1
#define HELLO_TIMEOUT_MS 1000

static void schedule_restart(struct roceswd *d)
{
	double now = rsw_now();
	if (d->up_since && now - d->up_since >= RSW_RESTART_STABLE_S)
		d->deaths = 0;
	d->deaths++;
	double wait = RSW_RESTART_MIN_S * pow(2, d->deaths - 1);
	if (wait > RSW_RESTART_MAX_S)
		wait = RSW_RESTART_MAX_S;
	d->state = RSW_DP_WAITING;
	d->due = now + wait;
	d->up_since = 0;
	rsw_log(LOG_NOTICE, "restarting the dataplane in %.1f s (death %u in a row)", wait,
		d->deaths);
}

/* The dataplane's command line: the EAL arguments, then its own. */
static void build_argv(struct roceswd *d, const char *config, char *argv[], char *eal)
{
	int n = 0;
	argv[n++] = d->dataplane;
	snprintf(eal, sizeof(d->cfg.eal_args), "%s", d->cfg.eal_args);
	for (char *save, *tok = strtok_r(eal, " \t", &save); tok && n < MAX_ARGS;
	     tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	argv[n++] = "--";
	argv[n++] = d->zone ? "--zone" : "--config";
	argv[n++] = (char *)config;
	argv[n++] = "--control-socket";
	argv[n++] = d->cfg.control_socket;
	if (d->cfg.control_group[0]) {
		argv[n++] = "--control-group";
		argv[n++] = d->cfg.control_group;
	}
	if (d->cfg.control_ro_group[0]) {
		argv[n++] = "--control-readonly-group";
		argv[n++] = d->cfg.control_ro_group;
	}
	if (d->cfg.user[0]) {
		argv[n++] = "--user";
		argv[n++] = d->cfg.user;
	}
	argv[n] = NULL;
}

int rsw_child_launcher(struct roceswd *d)
{
	char *argv[MAX_ARGS + 12], eal[sizeof(d->cfg.eal_args)];
	/* root's copy, made at start: the only file a dataplane started as root ever reads */
	build_argv(d, d->boot, argv, eal);
	d->launcher_fd = rsw_launcher_fork(argv, &d->launcher_pid);
	if (d->launcher_fd < 0) {
		rsw_log(LOG_ERR, "cannot fork the launcher: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static pid_t spawn(struct roceswd *d)
{
	if (d->launcher_fd >= 0) {
		d->restore = 1;
		return rsw_launcher_start(d->launcher_fd);
	}
	char *argv[MAX_ARGS + 12], eal[sizeof(d->cfg.eal_args)];
	/* always the copy of the last config applied: what runs is what running-config says */
	build_argv(d, d->running, argv, eal);
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL); /* the daemon blocks signals for signalfd */
		execv(d->dataplane, argv);
		fprintf(stderr, "roceswd: cannot execute %s: %s\n", d->dataplane, strerror(errno));
		_exit(127);
	}
	return pid;
}

void rsw_child_start(struct roceswd *d)
{
	pid_t pid = spawn(d);
	if (pid < 0) {
		rsw_log(LOG_ERR, "cannot start %s: %s", d->dataplane, strerror(errno));
		schedule_restart(d);
		return;
	}
	d->pid = pid;
	d->own = 1;
	d->state = RSW_DP_STARTING;
	d->started = rsw_now();
	d->next_hello = d->started + HELLO_EVERY_S;
	rsw_log(LOG_INFO, "started dataplane pid %d%s: %s %s -- %s %s --control-socket %s",
		(int)pid, d->launcher_fd >= 0 ? " (by the launcher, as root)" : "", d->dataplane,
		d->cfg.eal_args, d->zone ? "--zone" : "--config",
		d->launcher_fd >= 0 ? d->boot : d->running, d->cfg.control_socket);
}

/* A dataplane listening on the control socket, left by a roceswd that was killed or restarted:
 * its pid is the socket peer's (SO_PEERCRED); a pidfd tells when it dies. Returns 1 if one was
 * adopted. A listener that does not answer yet (busy with a long reload) is adopted all the same:
 * starting a second dataplane would take its socket away. */
int rsw_child_adopt(struct roceswd *d)
{
	char err[512];
	json_t *req = json_pack("{s:s}", "op", "hello");
	int fd = rsw_ctl_send(d->cfg.control_socket, req, -1, err, sizeof(err));
	json_decref(req);
	if (fd < 0)
		return 0;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid <= 0) {
		close(fd);
		return 0;
	}
	close(fd);
	int pfd = pidfd_open(cred.pid, 0);
	if (pfd < 0) {
		rsw_log(LOG_ERR, "dataplane pid %d on %s: cannot watch it: %s", (int)cred.pid,
			d->cfg.control_socket, strerror(errno));
		return 0;
	}
	d->pid = cred.pid;
	d->own = 0;
	d->pidfd = pfd;
	d->state = RSW_DP_STARTING;
	d->started = d->next_hello = rsw_now();
	rsw_log(LOG_NOTICE, "re-attaching to the dataplane pid %d already on %s", (int)cred.pid,
		d->cfg.control_socket);
	return 1;
}

static void describe(pid_t pid, int status, char *buf, size_t len)
{
	if (status < 0)
		snprintf(buf, len, "dataplane pid %d exited", (int)pid);
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "dataplane pid %d killed by signal %d", (int)pid, WTERMSIG(status));
	else
		snprintf(buf, len, "dataplane pid %d exited with status %d", (int)pid,
			 WEXITSTATUS(status));
}

/* The one place a death is handled (status -1: an adopted process, whose status only its
 * parent sees). */
void rsw_child_died(struct roceswd *d, int status)
{
	char what[128];
	describe(d->pid, status, what, sizeof(what));
	if (d->pidfd >= 0)
		close(d->pidfd);
	d->pidfd = -1;
	d->pid = 0;
	rsw_reload_abort(d, what);
	if (d->stopping)
		return;
	rsw_log(LOG_ERR, "%s%s", what, d->state == RSW_DP_STARTING ? " before it answered" : "");
	if (d->attach) {
		rsw_log(LOG_ERR, "--attach: not restarting a dataplane roceswd did not start");
		d->state = RSW_DP_STARTING;
		d->next_hello = rsw_now() + 1;
		return;
	}
	schedule_restart(d);
}

/* After SIGCHLD: reap every child; ours gets the death treatment. */
void rsw_child_reap(struct roceswd *d)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == d->launcher_pid) {
			/* no dataplane can be started any more: systemd restarts roceswd, which
			 * re-attaches to a dataplane still running */
			rsw_log(LOG_ERR, "the launcher (pid %d) died: stopping", (int)pid);
			d->launcher_pid = 0;
			d->stopping = d->failed = 1;
		} else if (pid == d->pid && d->own && d->launcher_fd < 0) {
			rsw_child_died(d, status);
		}
}

/* The launcher's news: the death of the dataplane it started. */
void rsw_child_launcher_event(struct roceswd *d)
{
	struct rsw_launch_msg m;
	int rc = rsw_launcher_event(d->launcher_fd, &m);
	if (rc <= 0) {
		rsw_log(LOG_ERR, "the launcher's channel closed: stopping");
		close(d->launcher_fd);
		d->launcher_fd = -1;
		d->stopping = d->failed = 1;
		return;
	}
	if (m.kind == RSW_LAUNCH_EXITED && m.pid == d->pid && d->own)
		rsw_child_died(d, m.status);
}

/* Timers: a due restart, a readiness probe. Never blocks longer than one hello. */
void rsw_child_tick(struct roceswd *d)
{
	double now = rsw_now();
	if (d->state == RSW_DP_WAITING && now >= d->due) {
		pthread_mutex_lock(&d->lock);
		d->stats.restarts++;
		pthread_mutex_unlock(&d->lock);
		rsw_log(LOG_NOTICE, "restarting the dataplane (restart %llu) with %s%s",
			(unsigned long long)d->stats.restarts,
			d->launcher_fd >= 0 ? d->boot : d->running,
			d->launcher_fd >= 0 ? ", then the running copy by reload" : "");
		rsw_child_start(d);
		return;
	}
	if (d->state != RSW_DP_STARTING || now < d->next_hello)
		return;
	char err[512];
	json_t *req = json_pack("{s:s}", "op", "hello");
	int fd = rsw_ctl_send(d->cfg.control_socket, req, -1, err, sizeof(err));
	json_decref(req);
	json_t *r = fd < 0 ? NULL : rsw_ctl_recv(fd, d->cfg.control_socket, HELLO_TIMEOUT_MS, err,
						  sizeof(err));
	d->next_hello = rsw_now() + HELLO_EVERY_S;
	if (!r)
		return;
	json_decref(r);
	d->state = RSW_DP_UP;
	d->up_since = rsw_now();
	rsw_log(LOG_INFO, "dataplane answers on %s (pid %d, %.2f s after its %s)",
		d->cfg.control_socket, (int)d->pid, d->up_since - d->started,
		d->own ? "start" : "adoption");
	rsw_dataplane_ready(d);
}

void rsw_child_stop(struct roceswd *d)
{
	d->stopping = 1;
	if (d->pid <= 0 || d->attach)
		return;
	if (d->failed) {
		/* without its launcher roceswd cannot restart it: the next roceswd adopts it */
		rsw_log(LOG_NOTICE, "leaving dataplane pid %d forwarding for the next roceswd",
			(int)d->pid);
		return;
	}
	if (d->own && d->launcher_fd >= 0) {
		/* the launcher's child, perhaps still root: it stops it */
		if (rsw_launcher_stop(d->launcher_fd, d->pid) < 0)
			rsw_log(LOG_ERR, "the launcher did not stop dataplane pid %d", (int)d->pid);
		d->pid = 0;
		return;
	}
	kill(d->pid, SIGTERM);
	for (int i = 0; i < 100 && d->pid > 0; i++) {
		if (d->own && waitpid(d->pid, NULL, WNOHANG) == d->pid)
			d->pid = 0;
		else if (!d->own && poll(&(struct pollfd){.fd = d->pidfd, .events = POLLIN}, 1, 0) > 0)
			d->pid = 0;
		else
			usleep(100000);
	}
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		if (d->own)
			waitpid(d->pid, NULL, 0);
	}
	if (d->pidfd >= 0)
		close(d->pidfd);
	d->pidfd = -1;
	d->pid = 0;
}
