/* roceswd's state, shared by its parts (docs/roceswd.md): the config and its copies, the
 * dataplane's life (roceswd_child.c), the reload in flight (roceswd_reload.c), the metrics. */
#ifndef RSW_ROCESWD_STATE_H
#define RSW_ROCESWD_STATE_H

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include "dataplane/config/config_roceswd.h"
#include "prom_metrics.h"
#include "roceswd_http.h"
#include "roceswd_watch.h"
#include "roceswd_zone.h"

/* Restart backoff: the n-th death in a row waits RSW_RESTART_MIN_S * 2^(n-1), at most
 * RSW_RESTART_MAX_S; a dataplane that answered for RSW_RESTART_STABLE_S starts the count again. */
#define RSW_RESTART_MIN_S 0.5
#define RSW_RESTART_MAX_S 30.0
#define RSW_RESTART_STABLE_S 30.0
/* The dataplane's refusal of a zone reload lists every error of every refused switch. */
#define RSW_DAEMON_MAX_ERROR 20000

enum rsw_dp_state {
	RSW_DP_STARTING, /* started or adopted, not answering yet */
	RSW_DP_UP,       /* answers `hello` */
	RSW_DP_WAITING,  /* dead; restart due at `due` */
};

struct roceswd {
	char config[4096];         /* the user's config (or zone file), absolute */
	char running[4096];        /* the copy of the last config the dataplane applied */
	char next[4096];           /* the copy a reload in flight asks the dataplane to apply */
	/* --zone: running and next are DIR/zone.yaml of these snapshot directories, each with a
	 * copy of every switch's config (roceswd_zone.c) */
	int zone;
	char running_dir[4096], next_dir[4096];
	struct rsw_zsnap snap;     /* the snapshot a reload in flight sends */
	struct rsw_watch watch;    /* the files whose change means a reload */
	char dataplane[4096];      /* rocesw-dataplane binary */
	struct rsw_daemon_cfg cfg;
	int attach;                /* --attach: programming a dataplane someone else runs */
	/* with ROCESWD user: roceswd runs as that user and its launcher (root) starts the
	 * dataplane from `boot`, root's copy of the config made at roceswd's start; once it
	 * answers, roceswd restores the running copy by reload (roceswd_launcher.h) */
	int launcher_fd;           /* -1: roceswd starts the dataplane itself (no user) */
	pid_t launcher_pid;
	char boot[4096], boot_dir[4096];
	int restore;               /* the dataplane started from boot: reload the running copy */
	int restoring;             /* the reload in flight is that restore */
	int stopping;
	int failed;                /* stopping because roceswd cannot go on: exit 1 */

	/* the dataplane */
	enum rsw_dp_state state;
	pid_t pid;                 /* 0: none */
	int own;                   /* our child (reaped on SIGCHLD); else adopted, watched by pidfd */
	int pidfd;
	double started, up_since, due, next_hello;
	unsigned deaths;           /* deaths in a row: the backoff's exponent */
	int ready_told;            /* READY=1 sent to the service manager */

	/* the reload in flight */
	int reload_fd;             /* -1, or the socket awaiting the dataplane's answer */
	double reload_sent;
	int reload_wanted;         /* asked for while none could be sent: sent when possible */
	char reload_why[64];

	uint64_t watchdog_usec;    /* systemd's WatchdogSec, 0: none */
	double next_watchdog;
	struct rsw_http *http;
	pthread_mutex_t lock;      /* stats: metrics threads read them */
	struct rsw_prom_daemon stats;
};

/* Seconds on the monotonic clock: every timer of the daemon. */
static inline double rsw_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
