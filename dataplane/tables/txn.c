#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "table_write.h"

struct rsw_txn {
	size_t n, cap;
	struct rsw_table_write **w;
};

static const char *const table_names[RSW_T_COUNT] = {
	"SWITCH", "PORT", "QOS_MAP", "HASH_POLICY", "NEIGHBOR", "NEXTHOP_GROUP", "ROUTE", "CLASSIFIER",
	"INTERFACE",
};

size_t rsw_table_write_size(unsigned table)
{
	static const size_t entry[RSW_T_COUNT] = {
		[RSW_T_SWITCH] = sizeof(struct rsw_switch_cfg),
		[RSW_T_PORT] = sizeof(struct rsw_port_cfg),
		[RSW_T_QOS_MAP] = sizeof(struct rsw_qos_map),
		[RSW_T_HASH_POLICY] = sizeof(struct rsw_named_policy),
		[RSW_T_NEIGHBOR] = sizeof(struct rsw_neighbor),
		[RSW_T_NHG] = sizeof(struct rsw_nhg),
		[RSW_T_ROUTE] = sizeof(struct rsw_route),
		[RSW_T_CLASSIFIER] = sizeof(struct rsw_classifier_rule),
		[RSW_T_INTERFACE] = sizeof(struct rsw_interface),
	};
	if (table >= RSW_T_COUNT)
		return sizeof(struct rsw_table_write);
	size_t n = offsetof(struct rsw_table_write, u) + entry[table];
	/* rounded up to the union's alignment, so that the entry's trailing padding is ours too */
	size_t a = _Alignof(struct rsw_table_write);
	return (n + a - 1) / a * a;
}

const char *rsw_table_name(unsigned t)
{
	return t < RSW_T_COUNT ? table_names[t] : "?";
}

struct rsw_txn *rsw_txn_new(void)
{
	return calloc(1, sizeof(struct rsw_txn));
}

int rsw_txn_add(struct rsw_txn *t, const struct rsw_table_write *w)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		void *p = realloc(t->w, cap * sizeof(*t->w));
		if (!p)
			return -1;
		t->w = p;
		t->cap = cap;
	}
	/* each write holds only its own table's entry: the union is as big as a group with its
	 * member list (6 KiB), a route 250 bytes, and a million routes must not cost 6 GB */
	size_t size = rsw_table_write_size(w->table);
	struct rsw_table_write *c = malloc(size);
	if (!c)
		return -1;
	memcpy(c, w, size);
	t->w[t->n++] = c;
	return 0;
}

size_t rsw_txn_len(const struct rsw_txn *t)
{
	return t->n;
}

const struct rsw_table_write *rsw_txn_at(const struct rsw_txn *t, size_t i)
{
	return i < t->n ? t->w[i] : NULL;
}

void rsw_txn_free(struct rsw_txn *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->w[i]);
	free(t->w);
	free(t);
}
