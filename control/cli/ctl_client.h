/* Client side of the control protocol (docs/control.md): one JSON request, one JSON reply, over
 * the dataplane's Unix SOCK_SEQPACKET socket. */
#ifndef RSW_CTL_CLIENT_H
#define RSW_CTL_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#define RSW_CTL_DEFAULT_SOCKET "/run/rocesw/dataplane.sock"
#define RSW_CTL_CLIENT_MAX_FDS 64 /* as the dataplane's RSW_CTL_MAX_FDS */

/* The socket path: the argument, else $ROCESW_SOCKET, else the default. */
const char *rsw_ctl_socket_path(const char *arg);

/* Sends req (the protocol version is added) and returns the reply's "result", or NULL with the
 * dataplane's error or the transport's in err. */
json_t *rsw_ctl_call(const char *path, json_t *req, char *err, size_t errlen);

/* The two halves of a call, for callers that wait on the reply in their own poll loop:
 * rsw_ctl_send connects and sends req (with pass_fd as SCM_RIGHTS unless it is -1) and returns
 * the connected socket, or -1 with err; rsw_ctl_recv waits up to timeout_ms (-1: no limit) for
 * the reply on it, closes it and returns what rsw_ctl_call would. Neither takes req's
 * reference. */
int rsw_ctl_send(const char *path, json_t *req, int pass_fd, char *err, size_t errlen);
/* rsw_ctl_send with n_fds descriptors (at most RSW_CTL_CLIENT_MAX_FDS), in the order req's
 * "files" names them (docs/control.md). The descriptors stay the caller's. */
int rsw_ctl_send_fds(const char *path, json_t *req, const int *fds, unsigned n_fds, char *err,
		     size_t errlen);
/* Sends `reload` of file, opened with this process's rights (never blocking on a FIFO) and
 * passed open: the dataplane reads no path on a client's behalf. name is what messages and
 * `show config` call it. Returns the socket for rsw_ctl_recv, or -1 with err. */
int rsw_ctl_send_reload(const char *path, const char *file, const char *name, char *err,
			size_t errlen);
json_t *rsw_ctl_recv(int fd, const char *path, int timeout_ms, char *err, size_t errlen);

#endif
