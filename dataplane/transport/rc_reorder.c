/* What an RC receiver sees of PSN order (rc_reorder.h): the PSNs held past a gap, in a ring
 * indexed by PSN that grows to the largest distance seen; the counts; a passive observer. */
#include <stdlib.h>

#include "rc_reorder.h"

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

uint64_t rsw_psn_unwrap(uint64_t ref, uint32_t p)
{
	uint64_t v = (ref & ~(uint64_t)RSW_PSN_MASK) | p;
	if (v + (RSW_PSN_MASK + 1) / 2 < ref)
		v += RSW_PSN_MASK + 1;
	else if (v > ref + (RSW_PSN_MASK + 1) / 2 && v >= RSW_PSN_MASK + 1)
		v -= RSW_PSN_MASK + 1;
	return v;
}

void rsw_reorder_seen(struct rsw_reorder_counts *c, uint64_t epsn, uint64_t psn)
{
	c->ooo_packets++;
	if (psn - epsn > c->ooo_max_distance)
		c->ooo_max_distance = psn - epsn;
}

int rsw_reorder_hold(struct rsw_ooo *o, struct rsw_reorder_counts *c, uint64_t epsn,
		     uint64_t psn, uint32_t len)
{
	int rc = rsw_ooo_place(o, epsn, psn, len);
	if (rc <= 0)
		return rc;
	if (o->held_pkts > c->reorder_max_packets)
		c->reorder_max_packets = o->held_pkts;
	if (o->held_bytes > c->reorder_max_bytes)
		c->reorder_max_bytes = o->held_bytes;
	return rc;
}

void rsw_psn_observer_init(struct rsw_psn_observer *q, uint32_t psn0)
{
	*q = (struct rsw_psn_observer){.epsn = psn0 & RSW_PSN_MASK};
}

void rsw_psn_observe(struct rsw_psn_observer *q, uint32_t psn, uint32_t len)
{
	uint64_t p = rsw_psn_unwrap(q->epsn, psn & RSW_PSN_MASK);
	q->packets++;
	q->bytes += len;
	if (p == q->epsn) {
		/* in order: it and the held ones after it complete */
		q->epsn++;
		while (rsw_ooo_take(&q->held, q->epsn))
			q->epsn++;
	} else if (p > q->epsn) {
		rsw_reorder_seen(&q->c, q->epsn, p);
		if (rsw_reorder_hold(&q->held, &q->c, q->epsn, p, len < 65535 ? len : 65534) == 0)
			q->duplicates++;
	} else {
		q->duplicates++; /* already placed */
	}
}

void rsw_psn_observer_free(struct rsw_psn_observer *q)
{
	rsw_ooo_free(&q->held);
}
