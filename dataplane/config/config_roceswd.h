/* The ROCESWD table of a switch config (rocesw addition): how roceswd runs the dataplane.
 *   ROCESWD:
 *     GLOBAL: {eal_args: "--no-huge -m 1024 -l 0-1", control_socket: PATH,
 *              control_group: NAME, metrics_port: 9101, metrics_address: 127.0.0.1,
 *              metrics_timeout: 10, dataplane: PATH, control_readonly_group: NAME,
 *              user: NAME}
 * Every field is optional (docs/roceswd.md gives the defaults). */
#ifndef RSW_CONFIG_ROCESWD_H
#define RSW_CONFIG_ROCESWD_H

#include <stddef.h>

#include "yaml_doc.h"

struct rsw_daemon_cfg {
	char eal_args[1024];
	char control_socket[108];
	char control_group[64];
	char control_ro_group[64]; /* the dataplane's --control-readonly-group */
	char user[64];             /* the dataplane's --user */
	char dataplane[1024];
	unsigned metrics_port;   /* 0: no metrics */
	char metrics_address[64]; /* numeric IPv4 or IPv6 address to bind */
	unsigned metrics_timeout; /* seconds a whole HTTP connection may take */
};

void rsw_daemon_cfg_defaults(struct rsw_daemon_cfg *d);
/* Parses the table t (may be NULL) of the config being compiled into d, checking it against
 * the schema; every error is reported (in c's list). Returns -1 if there was any. */
struct cc;
int rsw_daemon_cfg_parse(struct cc *c, yaml_node_t *t, struct rsw_daemon_cfg *d);
/* Reads the ROCESWD table of a config file. */
int rsw_config_roceswd(const char *path, struct rsw_daemon_cfg *d, char *err, size_t errlen);

#endif
