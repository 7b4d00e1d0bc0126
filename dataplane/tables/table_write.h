/* The table-write API (DESIGN.md): every change to the switch's tables is a write in a
 * transaction; a transaction is applied whole or not at all. The YAML compiler, the control socket
 * and the tests all go through this. */
#ifndef RSW_TABLE_WRITE_H
#define RSW_TABLE_WRITE_H

#include <stddef.h>

#include "table_types.h"

enum rsw_write_op {
	RSW_W_INSERT = 0, /* fails if the key exists */
	RSW_W_MODIFY,     /* fails if the key does not exist */
	RSW_W_SET,        /* insert or modify */
	RSW_W_DELETE,     /* fails if the key does not exist */
};

enum rsw_table_id {
	RSW_T_SWITCH = 0, /* the one switch profile: SET or MODIFY only */
	RSW_T_PORT,       /* key: name */
	RSW_T_QOS_MAP,    /* key: name */
	RSW_T_HASH_POLICY,/* key: name */
	RSW_T_NEIGHBOR,   /* key: port, ip */
	RSW_T_NHG,        /* key: name */
	RSW_T_ROUTE,      /* key: in_port, prefix */
	RSW_T_CLASSIFIER, /* key: name */
	RSW_T_INTERFACE,  /* key: port, address */
	RSW_T_COUNT
};

struct rsw_table_write {
	uint8_t op;
	uint8_t table;
	union {
		struct rsw_switch_cfg sw;
		struct rsw_port_cfg port;
		struct rsw_qos_map qos;
		struct rsw_named_policy policy;
		struct rsw_neighbor neigh;
		struct rsw_nhg nhg;   /* name, policy, n_buckets, resilient, members[].ip */
		struct rsw_route route;
		struct rsw_classifier_rule cls;
		struct rsw_interface intf;
	} u;
};

const char *rsw_table_name(unsigned table);
/* The bytes of a write of that table: the header and its own union member. A write kept in a
 * transaction is that big, so read only the member of its table (w->u.route for a ROUTE). */
size_t rsw_table_write_size(unsigned table);

struct rsw_txn;
struct rsw_txn *rsw_txn_new(void);
/* Appends a copy of w. Returns 0, or -1 when out of memory. */
int rsw_txn_add(struct rsw_txn *txn, const struct rsw_table_write *w);
size_t rsw_txn_len(const struct rsw_txn *txn);
const struct rsw_table_write *rsw_txn_at(const struct rsw_txn *txn, size_t i);
void rsw_txn_free(struct rsw_txn *txn);

#endif
