/* Flows as the hash lab and replay count them: addresses, IP protocol, L4 ports and, for RoCEv2,
 * the BTH destination QP (the QP is what tells the flows of one host pair apart). A small
 * open-addressing table numbers them in order of first sight. */
#ifndef RSW_FLOW_TABLE_H
#define RSW_FLOW_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "pkt_meta.h"

struct rsw_flow_key {
	uint8_t l3;
	uint8_t proto;
	uint16_t sport, dport;
	uint32_t qp;
	uint8_t src[16], dst[16];
};

struct rsw_flow_table {
	struct rsw_flow_key *key; /* n flows, by index */
	size_t n, cap;
	uint32_t *slot;           /* index + 1, 0 = empty */
	size_t slots;
};

void rsw_flow_key_of(const struct rsw_pkt_meta *m, struct rsw_flow_key *k);
/* Index of the flow, added if new; -1 when out of memory. */
long rsw_flow_table_find_add(struct rsw_flow_table *t, const struct rsw_flow_key *k);
void rsw_flow_table_free(struct rsw_flow_table *t);

#endif
