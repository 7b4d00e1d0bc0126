/* Internals shared by the config compiler's files: the compile state and value readers that
 * report "FILE:LINE: KEY: ..." errors. */
#ifndef RSW_CONFIG_CC_H
#define RSW_CONFIG_CC_H

#include "dataplane/tables/table_write.h"
#include "yaml_doc.h"

struct cc {
	struct ydoc y;
	struct rsw_txn *txn;
	/* ports in file order: their index is their position */
	unsigned n_ports;
	struct rsw_port_cfg ports[RSW_MAX_PORTS];
	yaml_node_t *tables[24];
	struct rsw_switch_cfg sw;
	struct rsw_named_policy default_pol;
	int have_default_pol;
};

/* Index of each table in struct cc.tables (the order of known_tables in config.c). */
enum { T_DEVICE, T_PORT, T_CABLE, T_DSCP, T_TCPG, T_PQOS, T_SWHASH, T_HASHPOL, T_NEIGH, T_NHG,
       T_ROUTE, T_PBR, T_BUFPOOL, T_BUFPROF, T_BUFPG, T_BUFQ, T_WRED, T_SCHED, T_QUEUE, T_PFCWD,
       T_CLASSIFIER, T_ROCESWD, T_INTF, T_COUNT };

void rsw_cc_origin(struct cc *c, const yaml_node_t *n, char *out);
int rsw_cc_add(struct cc *c, struct rsw_table_write *w);
int rsw_cc_want_map(struct cc *c, yaml_node_t *n, const char *key);
int rsw_cc_get_u64(struct cc *c, yaml_node_t *v, const char *key, unsigned long long lo,
		   unsigned long long hi, unsigned long long *out);
int rsw_cc_get_bool(struct cc *c, yaml_node_t *v, const char *key, int *out);
int rsw_cc_get_name(struct cc *c, yaml_node_t *v, const char *key, char *out);
int rsw_cc_port_by_name(struct cc *c, yaml_node_t *at, const char *key, const char *name);
int rsw_cc_get_prio_list(struct cc *c, yaml_node_t *v, const char *key, uint8_t *mask);

/* Traffic-manager tables (config_tm.c): parses BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG,
 * BUFFER_QUEUE, WRED_PROFILE, SCHEDULER, QUEUE, PFC_WD into c->sw.tm and c->ports[].tm, with
 * SONiC-like defaults for whatever the file leaves out. Runs after PORT and PORT_QOS_MAP. */
int rsw_cc_tm(struct cc *c);
/* CLASSIFIER rules as table writes (config_classifier.c). Runs after the ports are written. */
int rsw_cc_classifier(struct cc *c);
/* INTERFACE addresses as table writes (config_interface.c). Runs after the ports are written. */
int rsw_cc_interface(struct cc *c, yaml_node_t *t);

#endif
