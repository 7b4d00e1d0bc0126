/* roceswd's HTTP server for /metrics (libmicrohttpd, a thread per connection): whole-connection
 * deadline, connection limit, memory limit; the daemon's loop never waits on a client. */
#ifndef RSW_ROCESWD_HTTP_H
#define RSW_ROCESWD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/config/config_roceswd.h"

struct rsw_http;

/* Renders the metrics page (called in a connection's thread; cut: connections cut so far): a
 * malloc'd text of *len bytes, or NULL. */
typedef char *(*rsw_http_render_fn)(void *arg, uint64_t cut, size_t *len);

/* Serves cfg->metrics_address:metrics_port. NULL with the reason logged. */
struct rsw_http *rsw_http_start(const struct rsw_daemon_cfg *cfg, rsw_http_render_fn render,
				void *arg);
void rsw_http_stop(struct rsw_http *h);

#endif
