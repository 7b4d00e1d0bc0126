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
	/* writes are big (a group holds its member list); keep them off the array */
	struct rsw_table_write *c = malloc(sizeof(*c));
	if (!c)
		return -1;
	memcpy(c, w, sizeof(*c));
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
