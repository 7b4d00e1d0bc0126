/* Client side of the control protocol (docs/control.md): one JSON request, one JSON reply, over
 * the dataplane's Unix SOCK_SEQPACKET socket. */
#ifndef RSW_CTL_CLIENT_H
#define RSW_CTL_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#define RSW_CTL_DEFAULT_SOCKET "/run/rocesw/dataplane.sock"

/* The socket path: the argument, else $ROCESW_SOCKET, else the default. */
const char *rsw_ctl_socket_path(const char *arg);

/* Sends req (the protocol version is added) and returns the reply's "result", or NULL with the
 * dataplane's error or the transport's in err. */
json_t *rsw_ctl_call(const char *path, json_t *req, char *err, size_t errlen);

#endif
