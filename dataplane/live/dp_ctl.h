/* The dataplane's control socket (docs/control.md): a Unix SOCK_SEQPACKET socket, one JSON
 * request per message and one JSON reply, served from the main lcore between its other duties so
 * workers never wait on a client. Peers are checked with SO_PEERCRED: root, the dataplane's own
 * user, or members of the control group; members of the read-only group may only read. */
#ifndef RSW_DP_CTL_H
#define RSW_DP_CTL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "dp_ctx.h"

struct rsw_dp_zone;

#define RSW_CTL_PROTOCOL 1
#define RSW_CTL_MAX_REQUEST 65536      /* bytes of one request */
#define RSW_CTL_MAX_REPLY (4u << 20)   /* bytes of one reply */
#define RSW_CTL_MAX_CLIENTS 16
/* Connections waiting for accept(): a burst of clients queues instead of failing connect() with
 * EAGAIN (the kernel caps it at net.core.somaxconn). */
#define RSW_CTL_BACKLOG 4096
#define RSW_CTL_MAX_FDS 64              /* descriptors passed with one request */
#define RSW_CTL_MAX_NAME 1024           /* bytes of a passed file's name */
#define RSW_CTL_IDLE_S 60               /* default: a client silent this long is disconnected */

struct rsw_ctl_stats {
	uint64_t requests, errors, refused_peers, oversized, slow_clients, too_many_clients, idle_clients,
		hung_up;
};

struct rsw_ctl_peer {
	uint32_t uid, gid;
	int32_t pid;
	uint8_t readonly; /* only in the read-only group: requests that change nothing */
};

struct rsw_ctl {
	int listen_fd;
	int client[RSW_CTL_MAX_CLIENTS];
	time_t last_seen[RSW_CTL_MAX_CLIENTS];
	struct rsw_ctl_peer peer[RSW_CTL_MAX_CLIENTS]; /* SO_PEERCRED at accept */
	char path[108];
	gid_t group;                       /* (gid_t)-1: none */
	gid_t ro_group;                    /* read-only members; (gid_t)-1: none */
	unsigned idle_s;                   /* silent clients are let go after this */
	struct rsw_ctl_stats stats;
	struct rsw_dp *dp;                 /* the switch a request is for */
	struct rsw_dp_zone *zone;          /* every switch served (dp_zone_ctl.c), or NULL */
	const char *config_path;           /* the config applied last (at start or by reload) */
	char config_buf[4096];
	uint64_t reloads;
	char *buf;                         /* one request */
	/* the request being handled: its sender and the descriptors that came with it, in order
	 * (named by its "files"); closed once it is answered */
	const struct rsw_ctl_peer *req_peer;
	int req_fd[RSW_CTL_MAX_FDS];
	unsigned n_req_fd;
	int req_fd_truncated;              /* more descriptors than RSW_CTL_MAX_FDS were sent */
	json_t *req_errors;                /* a refusal's details ("errors" of the error reply) */
	void (*log)(void *arg, const char *line); /* each change request and its outcome; arg: dp */
};

/* Creates the socket at path (replacing a stale one), mode 0660, group `group` if given (a name
 * or number), and read-write for ro_group too if given (an ACL entry): its members may connect,
 * but every op marked as a change (dp_ctl_ops.c) is refused to them. Returns 0, or -1 with a
 * message. */
int rsw_ctl_open(struct rsw_ctl *c, struct rsw_dp *dp, const char *path, const char *group,
		 const char *ro_group, char *err, size_t errlen);
/* Does op change the switch (dp_ctl_ops.c)? */
int rsw_ctl_op_changes(const char *op);
/* Serves whatever is ready, waiting at most timeout_ms. */
void rsw_ctl_poll(struct rsw_ctl *c, int timeout_ms);
void rsw_ctl_close(struct rsw_ctl *c);

/* One request (dp_ctl_ops.c): the reply's result, or NULL with the error in err. */
json_t *rsw_ctl_handle(struct rsw_ctl *c, const char *op, json_t *req, char *err, size_t errlen);
/* "files" of a request against the descriptors that came with it (dp_ctl_ops.c). */
int rsw_ctl_check_files(struct rsw_ctl *c, const char *op, json_t *req, char *err, size_t errlen);
/* Logs a change request and its outcome as the switch c->dp's (dp_ctl_ops.c). */
void rsw_ctl_log_change(struct rsw_ctl *c, const char *op, json_t *req, json_t *result,
			const char *err);
/* What the dataplane chose for the running switch and a config file does not say (a zone's
 * switch i runs ECN seed 1 + i), carried into a reloaded config's writes: a reload changes only
 * what the file changes. */
struct rsw_txn;
struct rsw_state;
void rsw_ctl_keep_run_params(struct rsw_txn *file, const struct rsw_state *running);
/* `reload` of every switch of a zone in one zone-wide transaction (dp_zone_reload.c). */
json_t *rsw_dp_zone_reload(struct rsw_ctl *c, json_t *req, char *err, size_t errlen);
/* Error texts: a zone's refused reload lists every error of every refused switch. */
#define RSW_CTL_MAX_ERROR 16384

/* One request to the switch its "switch" field names (dp_zone_ctl.c), then rsw_ctl_handle. */
json_t *rsw_ctl_dispatch(struct rsw_ctl *c, const char *op, json_t *req, char *err,
			 size_t errlen);

#endif
