#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roceswd_launcher.h"

#define STOP_GRACE_MS 10000
#define CHANNEL_FD 3

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tell(int fd, char kind, int pid, int status)
{
	struct rsw_launch_msg m = {.kind = kind, .pid = pid, .status = status};
	/* roceswd gone: nothing to tell; the loop sees the end of file next */
	(void)!send(fd, &m, sizeof(m), MSG_NOSIGNAL);
}

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* roceswd blocks signals for its signalfd */
	prctl(PR_SET_NAME, "rocesw-dataplan", 0, 0, 0);
	execv(argv[0], argv);
	fprintf(stderr, "roceswd: cannot execute %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The launcher's life: requests from roceswd, deaths of the dataplane. It ends when roceswd
 * closes the channel (exits or dies), leaving a running dataplane to the next roceswd, which
 * re-attaches to it (as systemd's KillMode=process leaves it). */
static void __attribute__((noreturn)) launcher(int fd, char *const argv[])
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	pid_t child = 0;
	double kill_at = 0; /* stopping: SIGKILL then */
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		int timeout = kill_at ? 100 : -1;
		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			_exit(1);
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		int status;
		pid_t dead;
		while ((dead = waitpid(-1, &status, WNOHANG)) > 0)
			if (dead == child) {
				tell(fd, RSW_LAUNCH_EXITED, child, status);
				child = 0;
				kill_at = 0;
			}
		if (kill_at && child && now_ms() >= kill_at) {
			kill(child, SIGKILL);
			kill_at = 0;
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		char req;
		ssize_t n = recv(fd, &req, 1, 0);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			_exit(0);
		if (req == 'S' && child) {
			tell(fd, RSW_LAUNCH_FAILED, child, EBUSY);
		} else if (req == 'S') {
			child = spawn(argv);
			if (child < 0) {
				tell(fd, RSW_LAUNCH_FAILED, 0, errno);
				child = 0;
			} else {
				tell(fd, RSW_LAUNCH_STARTED, child, 0);
			}
		} else if (req == 'T' && child) {
			kill(child, SIGTERM);
			kill_at = now_ms() + STOP_GRACE_MS;
		} else if (req == 'T') {
			tell(fd, RSW_LAUNCH_EXITED, 0, 0); /* nothing runs: stopped already */
		}
		/* anything else is ignored: the requests are these two bytes */
	}
}

int rsw_launcher_fork(char *const argv[], pid_t *pid)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	*pid = fork();
	if (*pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		errno = e;
		return -1;
	}
	if (*pid == 0) {
		/* nothing of roceswd's but the channel and stdio: its inotify, signalfd, sockets */
		if (dup2(sv[1], CHANNEL_FD) < 0)
			_exit(1);
		close_range(CHANNEL_FD + 1, ~0U, 0);
		prctl(PR_SET_NAME, "roceswd-launch", 0, 0, 0);
		launcher(CHANNEL_FD, argv);
	}
	close(sv[1]);
	return sv[0];
}

/* The next message, skipping the end of a dataplane already handled (none is pending when a
 * start is asked for: roceswd starts only after it saw the previous death). */
static int next(int fd, struct rsw_launch_msg *m, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int rc = poll(&p, 1, timeout_ms);
	if (rc <= 0)
		return rc < 0 ? -1 : 0;
	rc = rsw_launcher_event(fd, m);
	return rc == 0 ? -1 : rc; /* the launcher gone */
}

pid_t rsw_launcher_start(int fd)
{
	struct rsw_launch_msg m;
	if (send(fd, "S", 1, MSG_NOSIGNAL) != 1)
		return -1;
	int rc = next(fd, &m, 5000);
	if (rc <= 0) {
		errno = rc == 0 ? ETIMEDOUT : EPIPE;
		return -1;
	}
	if (m.kind == RSW_LAUNCH_STARTED)
		return m.pid;
	errno = m.status;
	return -1;
}

int rsw_launcher_stop(int fd, pid_t pid)
{
	struct rsw_launch_msg m;
	if (send(fd, "T", 1, MSG_NOSIGNAL) != 1)
		return -1;
	for (double end = now_ms() + STOP_GRACE_MS + 2000; now_ms() < end;) {
		int rc = next(fd, &m, 500);
		if (rc < 0)
			return -1;
		if (rc > 0 && m.kind == RSW_LAUNCH_EXITED && (m.pid == pid || m.pid == 0))
			return 0;
	}
	return -1;
}

int rsw_launcher_event(int fd, struct rsw_launch_msg *m)
{
	ssize_t n = recv(fd, m, sizeof(*m), 0);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m))
		return -1;
	return 1;
}
