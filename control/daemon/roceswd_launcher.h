/* roceswd's privileged half (docs/security.md "roceswd's privileges"): with ROCESWD.GLOBAL.user,
 * roceswd forks this launcher while still root, then becomes the user. The launcher keeps root
 * and the unit's capabilities for one purpose: to start the dataplane with the command line
 * fixed when it was forked (so roceswd can never choose what runs as root, nor with which file),
 * to stop it, and to tell roceswd of its death. It reads nothing but one-byte requests. */
#ifndef RSW_ROCESWD_LAUNCHER_H
#define RSW_ROCESWD_LAUNCHER_H

#include <sys/types.h>

/* What the launcher tells roceswd. */
struct rsw_launch_msg {
	char kind;  /* RSW_LAUNCH_STARTED, _FAILED, _EXITED */
	int pid;
	int status; /* EXITED: as waitpid gives it; FAILED: errno */
};

#define RSW_LAUNCH_STARTED 'P'
#define RSW_LAUNCH_FAILED 'F'
#define RSW_LAUNCH_EXITED 'X'

/* Forks the launcher with the dataplane's command line argv (copied by the fork: fixed from
 * now on). Returns roceswd's end of the channel (*pid: the launcher), or -1 with errno. */
int rsw_launcher_fork(char *const argv[], pid_t *pid);

/* Asks for a start: the dataplane's pid, or -1 with errno (EBUSY: one runs already). */
pid_t rsw_launcher_start(int fd);
/* Asks the launcher to stop the dataplane (SIGTERM, SIGKILL after 10 s) and waits for its end.
 * Returns 0, or -1 if the launcher is gone. */
int rsw_launcher_stop(int fd, pid_t pid);
/* Reads one event (after poll said the channel is readable). Returns 1 with *m, 0 when the
 * launcher is gone (end of file), -1 on error. */
int rsw_launcher_event(int fd, struct rsw_launch_msg *m);

#endif
