/* roceswd, the control daemon (docs/roceswd.md): validates the config, runs and programs the
 * dataplane, reloads on change, restarts a dataplane that died, serves Prometheus metrics. */
#ifndef RSW_ROCESWD_H
#define RSW_ROCESWD_H

#include <sys/types.h>

#include "config_roceswd.h"
#include "prom_metrics.h"

struct roceswd {
	char config[4096];         /* the user's config, absolute */
	char running[4096];        /* the copy of the last config that was applied */
	char dataplane[4096];      /* rocesw-dataplane binary */
	struct rsw_daemon_cfg cfg;
	int attach;                /* programming a dataplane someone else runs */
	pid_t child;
	double child_started;
	int stopping;
	struct rsw_prom_daemon stats;
};

/* roceswd_child.c */
int rsw_child_start(struct roceswd *d);
int rsw_child_wait_ready(struct roceswd *d, double timeout_s);
void rsw_child_reap(struct roceswd *d);
void rsw_child_stop(struct roceswd *d);

#endif
