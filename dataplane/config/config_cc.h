/* Internals shared by the config compiler's files: the compile state and value readers that
 * report "FILE:LINE: KEY: ..." errors. */
#ifndef RSW_CONFIG_CC_H
#define RSW_CONFIG_CC_H

#include "dataplane/tables/table_write.h"
#include "config_schema.h"
#include "yaml_doc.h"

/* Index of each table in struct cc.tables (the order of the modelled tables in config_schema.c). */
enum { T_DEVICE, T_PORT, T_CABLE, T_DSCP, T_TCPG, T_TCQ, T_PFCQ, T_PQOS, T_INTF, T_SWHASH, T_HASHPOL,
       T_NEIGH, T_NHG, T_ROUTE, T_PBR, T_CLASSIFIER, T_BUFPOOL, T_BUFPROF, T_BUFPG, T_BUFQ,
       T_WRED, T_SCHED, T_QUEUE, T_PFCWD, T_ROCESWD, T_ARSPROF, T_ARSOBJ, T_COUNT };

struct cc {
	struct ydoc y;
	struct rsw_txn *txn;
	/* ports in file order: their index is their position */
	unsigned n_ports;
	struct rsw_port_cfg ports[RSW_MAX_PORTS];
	yaml_node_t *tables[T_COUNT];
	struct rsw_switch_cfg sw;
	struct rsw_named_policy default_pol;
	int have_default_pol;
	/* a SONiC config_db.json: what rocesw does not model is a warning, not an error */
	int sonic;
	/* how BUFFER_PROFILE and BUFFER_POOL are read (c->sw.tm.convention), and what chose it,
	 * for messages: "DEVICE_METADATA buffer_convention", "platform x86_64-arista_7060..." */
	char buf_conv_why[128];
	/* ARS_OBJECT entries, for NEXTHOP_GROUP.ars_object (config_ars.c) */
	unsigned n_ars;
	struct rsw_ars_obj *ars;
	FILE *warn;       /* where warnings go (NULL: dropped) */
	char **warned;    /* each warning once */
	size_t n_warned;
};

/* One field's value as rsw_cc_fields read it. */
struct rsw_fval {
	yaml_node_t *k, *v; /* NULL when the field is absent */
	const char *s;      /* its scalar text, if a scalar */
	unsigned long long u;
	long long i;
	int word;           /* 1 + index of the matching word (RSW_FT_ENUM, words of RSW_FT_UINT) */
	uint8_t mac[6];
	uint8_t prios;      /* RSW_FT_PRIOS bit mask */
	int b;              /* RSW_FT_BOOL */
};

/* Checks every field of the mapping v (the entry "key" of a table, whose key node is at)
 * against the schema fs: unknown fields, types, ranges, words, required fields. Every error is
 * reported; a field SONiC has and rocesw does not model is a warning in a SONiC file. vals[i]
 * receives field i (vals[i].v == NULL when absent or in error). Returns the number of errors. */
int rsw_cc_fields(struct cc *c, const struct rsw_field_schema *fs, const char *key, yaml_node_t *at,
		  yaml_node_t *v, struct rsw_fval *vals);
/* A warning, printed once for each distinct message. */
void rsw_cc_warn(struct cc *c, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void rsw_cc_origin(struct cc *c, const yaml_node_t *n, char *out);
int rsw_cc_add(struct cc *c, struct rsw_table_write *w);
int rsw_cc_want_map(struct cc *c, yaml_node_t *n, const char *key);
int rsw_cc_get_u64(struct cc *c, yaml_node_t *v, const char *key, unsigned long long lo,
		   unsigned long long hi, unsigned long long *out);
int rsw_cc_get_name(struct cc *c, yaml_node_t *v, const char *key, char *out);
int rsw_cc_port_by_name(struct cc *c, yaml_node_t *at, const char *key, const char *name);

/* The buffer convention of the switch (config_tm.c, docs/tm.md "Buffer conventions"): given
 * (DEVICE_METADATA buffer_convention: "broadcom" or "mellanox"), or from its platform or hwsku
 * string, else mellanox. Any of the three may be NULL. Sets c->sw.tm.convention and
 * c->buf_conv_why. */
void rsw_cc_buffer_convention(struct cc *c, const char *given, const char *platform,
			      const char *hwsku);
/* Traffic-manager tables (config_tm.c): parses BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG,
 * BUFFER_QUEUE, WRED_PROFILE, SCHEDULER, QUEUE, PFC_WD into c->sw.tm and c->ports[].tm, with
 * SONiC-like defaults for whatever the file leaves out. Runs after PORT and PORT_QOS_MAP. */
int rsw_cc_tm(struct cc *c);
/* CLASSIFIER rules as table writes (config_classifier.c). Runs after the ports are written. */
int rsw_cc_classifier(struct cc *c);
/* INTERFACE addresses as table writes (config_interface.c). Runs after the ports are written. */
int rsw_cc_interface(struct cc *c, yaml_node_t *t);
/* SWITCH_HASH and HASH_POLICY (config_hash.c). */
void rsw_cc_hash(struct cc *c);
/* NEIGH, NEXTHOP_GROUP, STATIC_ROUTE, POLICY_ROUTE (config_l3.c). Runs after the ports. */
void rsw_cc_l3(struct cc *c);
/* ARS_PROFILE into c->sw.ars and ARS_OBJECT into c->ars (before the SWITCH write and groups). */
void rsw_cc_ars(struct cc *c);
/* NEXTHOP_GROUP key's ars_object value v: its object into *out, or an error (-1). */
int rsw_cc_ars_object(struct cc *c, yaml_node_t *v, const char *key, struct rsw_ars_obj *out);

#endif
