/* roceswd's dataplane process: started with the EAL arguments and control socket of the config's
 * ROCESWD table on the running copy of the config, watched, restarted when it dies. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "daemon_log.h"
#include "roceswd.h"

#define MAX_ARGS 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int rsw_child_start(struct roceswd *d)
{
	char *argv[MAX_ARGS + 8], eal[sizeof(d->cfg.eal_args)];
	int n = 0;
	argv[n++] = d->dataplane;
	snprintf(eal, sizeof(eal), "%s", d->cfg.eal_args);
	for (char *save, *tok = strtok_r(eal, " \t", &save); tok && n < MAX_ARGS;
	     tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	argv[n++] = "--";
	/* the user's file the first time (so table origins name it), the copy of the last config
	 * applied when restarting */
	char *config = d->stats.restarts ? d->running : d->config;
	argv[n++] = "--config";
	argv[n++] = config;
	argv[n++] = "--control-socket";
	argv[n++] = d->cfg.control_socket;
	if (d->cfg.control_group[0]) {
		argv[n++] = "--control-group";
		argv[n++] = d->cfg.control_group;
	}
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0) {
		rsw_log(LOG_ERR, "cannot start %s: %s", d->dataplane, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL); /* the daemon blocks signals for signalfd */
		execv(d->dataplane, argv);
		fprintf(stderr, "roceswd: cannot execute %s: %s\n", d->dataplane, strerror(errno));
		_exit(127);
	}
	d->child = pid;
	d->child_started = now_s();
	rsw_log(LOG_INFO, "started dataplane pid %d: %s %s -- --config %s --control-socket %s",
		(int)pid, d->dataplane, d->cfg.eal_args, config, d->cfg.control_socket);
	return rsw_child_wait_ready(d, 120);
}

int rsw_child_wait_ready(struct roceswd *d, double timeout_s)
{
	double until = now_s() + timeout_s;
	char err[512] = "";
	while (now_s() < until) {
		json_t *r = rsw_ctl_call(d->cfg.control_socket, json_pack("{s:s}", "op", "hello"), err,
					 sizeof(err));
		if (r) {
			json_decref(r);
			rsw_log(LOG_INFO, "dataplane answers on %s", d->cfg.control_socket);
			return 0;
		}
		if (d->child > 0 && waitpid(d->child, NULL, WNOHANG) == d->child) {
			rsw_log(LOG_ERR, "dataplane exited while starting");
			d->child = 0;
			return -1;
		}
		usleep(100000);
	}
	rsw_log(LOG_ERR, "dataplane does not answer on %s: %s", d->cfg.control_socket, err);
	return -1;
}

/* After SIGCHLD: reap, and restart an unexpected exit (at most one start every 2 s). */
void rsw_child_reap(struct roceswd *d)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != d->child)
			continue;
		d->child = 0;
		if (d->stopping)
			continue;
		if (WIFSIGNALED(status))
			rsw_log(LOG_ERR, "dataplane pid %d killed by signal %d", (int)pid, WTERMSIG(status));
		else
			rsw_log(LOG_ERR, "dataplane pid %d exited with status %d", (int)pid,
				WEXITSTATUS(status));
		double wait = d->child_started + 2 - now_s();
		if (wait > 0)
			usleep((useconds_t)(wait * 1e6));
		d->stats.restarts++;
		rsw_log(LOG_NOTICE, "restarting the dataplane (restart %llu) with %s",
			(unsigned long long)d->stats.restarts, d->running);
		rsw_child_start(d);
	}
}

void rsw_child_stop(struct roceswd *d)
{
	d->stopping = 1;
	if (d->child <= 0)
		return;
	kill(d->child, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(d->child, NULL, WNOHANG) == d->child) {
			d->child = 0;
			return;
		}
		usleep(100000);
	}
	kill(d->child, SIGKILL);
	waitpid(d->child, NULL, 0);
	d->child = 0;
}
