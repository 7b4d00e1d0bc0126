/* Out-of-order placement at a closed-loop responder: the PSNs held past a gap, in a ring
 * indexed by PSN that grows to the largest distance seen. */
#include <stdlib.h>

#include "replay_ooo.h"

int rsw_ooo_place(struct rsw_ooo *o, uint64_t epsn, uint64_t psn, uint32_t len)
{
	uint64_t d = psn - epsn;
	if (d >= o->cap) {
		uint64_t cap = o->cap ? o->cap : 64;
		while (cap <= d)
			cap *= 2;
		if (cap > (1u << 24)) /* the PSN space: never more apart */
			return -1;
		uint16_t *n = calloc(cap, sizeof(*n));
		if (!n)
			return -1;
		/* every PSN held lies in (epsn, epsn + old cap): move each to its new slot */
		for (uint64_t p = epsn + 1; o->len && p < epsn + o->cap; p++)
			n[p & (cap - 1)] = o->len[p & (o->cap - 1)];
		free(o->len);
		o->len = n;
		o->cap = (uint32_t)cap;
	}
	uint16_t *slot = &o->len[psn & (o->cap - 1)];
	if (*slot)
		return 0;
	*slot = (uint16_t)(len + 1);
	o->held_pkts++;
	o->held_bytes += len;
	return 1;
}

int rsw_ooo_take(struct rsw_ooo *o, uint64_t psn)
{
	if (!o->held_pkts)
		return 0;
	uint16_t *slot = &o->len[psn & (o->cap - 1)];
	if (!*slot)
		return 0;
	o->held_pkts--;
	o->held_bytes -= *slot - 1u;
	*slot = 0;
	return 1;
}

void rsw_ooo_free(struct rsw_ooo *o)
{
	free(o->len);
	o->len = NULL;
	o->cap = 0;
}
