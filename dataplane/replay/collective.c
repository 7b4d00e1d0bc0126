/* Defaults, transfers and NCCL's bandwidth arithmetic of a closed-loop collective. */
#include <stdlib.h>
#include <string.h>

#include "collective.h"

void rsw_coll_defaults(struct rsw_coll *c)
{
	memset(c, 0, sizeof(*c));
	c->pattern = RSW_COLL_RING;
	c->message = 1u << 20;
	c->mtu = 4096;
	c->qps = 1;
	c->split = 1;
	/* the lossless RoCE class of the shipped configs: SONiC's AZURE DSCP_TO_TC_MAP puts 3 on
	 * TC 3, in pfc_enable "3,4" (26, RoCEv2 NICs' own default, is lossy TC 1 there) */
	c->dscp = 3;
	c->cts_dscp = 48;   /* the CTS classifier's strict queue (REFERENCE §6) */
	c->cnp_dscp = 48;   /* CNPs as NVIDIA NICs send them (cnp_dscp 48) */
	const uint8_t ip[4] = {10, 1, 0, 1}, mac[6] = {0x02, 0, 0, 0, 0x01, 0};
	memcpy(c->ip_base, ip, 4);
	c->ip_stride = 2;
	memcpy(c->router_mac, mac, 6);
	c->ack_every = 16;
	/* the QP's transport timer: 4.096 us x 2^timeout (the IB timeout attribute, as ConnectX
	 * and Linux's qib_rc.c compute it; NCCL sets it with NCCL_IB_TIMEOUT): 14 gives 67.1 ms */
	c->rto_ns = 4096ull << 14;
	c->retry_cnt = 7;   /* NCCL_IB_RETRY_CNT's default, the largest the 3-bit field allows */
	c->nak = 1;
	rsw_dcqcn_defaults(&c->dcqcn_p);
}

double rsw_coll_busbw_factor(unsigned pattern, unsigned n)
{
	switch (pattern) {
	case RSW_COLL_RING:
	case RSW_COLL_TREE:
		return 2.0 * (n - 1) / n;
	case RSW_COLL_ALLGATHER:
	case RSW_COLL_REDUCE_SCATTER:
	case RSW_COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

const char *rsw_coll_pattern_name(unsigned pattern)
{
	static const char *const names[RSW_COLL_PATTERNS] = {
		"ring", "tree", "allgather", "reducescatter", "alltoall", "incast"};
	return pattern < RSW_COLL_PATTERNS ? names[pattern] : "?";
}

/* ---- the transfers of a collective ---- */

/* Depth of rank i in the binary tree (root 0 at depth 0). */
static unsigned level(unsigned i)
{
	unsigned l = 0;
	for (i++; i > 1; i >>= 1)
		l++;
	return l;
}

/* The unit each round moves: the chunk (or the whole of per when there is no chunk or it is
 * larger), and how many rounds (loops) cut per into it; 0 rounds when there is nothing. */
static uint64_t cut(const struct rsw_coll *c, uint64_t per, uint64_t *rounds)
{
	uint64_t chunk = c->chunk && c->chunk < per ? c->chunk : per;
	*rounds = chunk ? (per + chunk - 1) / chunk : 0;
	return chunk;
}

/* What each rank moves in all, as the pattern cuts the message: a ring moves a rank's share. */
static uint64_t per_rank(const struct rsw_coll *c)
{
	switch (c->pattern) {
	case RSW_COLL_RING:
	case RSW_COLL_REDUCE_SCATTER:
	case RSW_COLL_ALLGATHER:
	case RSW_COLL_ALL_TO_ALL: return c->message / c->n_ranks;
	default: return c->message;
	}
}

/* Ring steps a loop has. */
static unsigned ring_steps(const struct rsw_coll *c)
{
	return c->pattern == RSW_COLL_RING ? 2 * (c->n_ranks - 1) : c->n_ranks - 1;
}

static int ring_like(const struct rsw_coll *c)
{
	return c->pattern == RSW_COLL_RING || c->pattern == RSW_COLL_REDUCE_SCATTER ||
	       c->pattern == RSW_COLL_ALLGATHER;
}

void rsw_coll_plan(const struct rsw_coll *c, struct rsw_coll_plan *p)
{
	unsigned n = c->n_ranks;
	uint64_t loops = 0;
	*p = (struct rsw_coll_plan){0};
	if (!n)
		return;
	p->chunk = cut(c, per_rank(c), &loops);
	p->loops = loops;
	if (ring_like(c)) {
		p->per_round = n > 1 ? n : 0;
		p->rounds = loops * ring_steps(c);
	} else if (c->pattern == RSW_COLL_TREE) {
		p->per_round = 2 * (n - 1);
		p->rounds = loops;
	} else if (c->pattern == RSW_COLL_ALL_TO_ALL) {
		p->per_round = n * (n - 1);
		p->rounds = loops;
	} else { /* incast: every rank but the root */
		p->per_round = c->root < n ? n - 1 : 0;
		p->rounds = loops;
	}
	if (!p->per_round)
		p->rounds = 0;
}

/* Bytes of loop l: the chunk, or what is left of per in the last. */
static uint64_t loop_bytes(const struct rsw_coll_plan *p, uint64_t per, uint64_t l)
{
	return l + 1 < p->loops ? p->chunk : per - l * p->chunk;
}

/* Ring collectives as NCCL runs them: the buffer is cut into loops of N chunks; in each loop,
 * step s of rank i sends to rank i + 1 the chunk it received at step s - 1 (reduced or copied).
 * Loops run one after the other on each connection, and a loop's step waits only for its own
 * previous step, so loops pipeline. A round is one step of one loop. */
static void ring_round(const struct rsw_coll *c, const struct rsw_coll_plan *p, uint64_t r,
		       struct rsw_coll_xfer *out)
{
	unsigned n = c->n_ranks, steps = ring_steps(c);
	uint64_t l = r / steps, s = r % steps, b = loop_bytes(p, per_rank(c), l);
	for (unsigned i = 0; i < n; i++) /* rank i's step s needs rank i-1's step s-1 */
		out[i] = (struct rsw_coll_xfer){
			.src = (uint16_t)i, .dst = (uint16_t)((i + 1) % n), .step = (uint32_t)s,
			.bytes = b, .dep = {s ? (int64_t)((r - 1) * n + (i + n - 1) % n) : -1, -1}};
}

/* Binary-tree AllReduce (parent of rank i is (i - 1) / 2), pipelined by chunks: a rank sends a
 * chunk up once both children's copies of it arrived, the root sends it down once reduced, and a
 * rank forwards it down once it came from its parent. Steps: reduce of level d is step depth - d,
 * broadcast to level d is step depth + d - 1. A round is a loop: first the reduce, deepest ranks
 * first (rank k's at n - 1 - k), then the broadcast (to rank k at n - 2 + k). */
static void tree_round(const struct rsw_coll *c, const struct rsw_coll_plan *p, uint64_t r,
		       struct rsw_coll_xfer *out)
{
	unsigned n = c->n_ranks, depth = level(n - 1);
	int64_t base = (int64_t)(r * p->per_round);
	uint64_t b = loop_bytes(p, c->message, r);
#define UP(k) (base + (int64_t)(n - 1 - (k)))
#define DOWN(k) (base + (int64_t)(n - 2 + (k)))
	for (unsigned k = n - 1; k >= 1; k--) {
		unsigned a = 2 * k + 1, bb = 2 * k + 2;
		out[n - 1 - k] = (struct rsw_coll_xfer){
			.src = (uint16_t)k, .dst = (uint16_t)((k - 1) / 2),
			.step = depth - level(k), .bytes = b,
			.dep = {a < n ? UP(a) : -1, bb < n ? UP(bb) : -1}};
	}
	for (unsigned k = 1; k < n; k++) {
		unsigned pa = (k - 1) / 2;
		/* the root has both children's reductions */
		int64_t d0 = pa == 0 ? UP(1) : DOWN(pa), d1 = pa == 0 && n > 2 ? UP(2) : -1;
		out[n - 2 + k] = (struct rsw_coll_xfer){
			.src = (uint16_t)pa, .dst = (uint16_t)k, .step = depth + level(k) - 1,
			.bytes = b, .dep = {d0, d1}};
	}
#undef UP
#undef DOWN
}

/* All-to-all and incast, chunk by chunk: a round is one chunk from every sender to each of
 * its receivers, nothing to wait for. */
static void spread_round(const struct rsw_coll *c, const struct rsw_coll_plan *p, uint64_t r,
			 struct rsw_coll_xfer *out)
{
	unsigned n = c->n_ranks, j = 0;
	uint64_t b = loop_bytes(p, per_rank(c), r);
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 1; k < n; k++) {
			unsigned dst = (i + k) % n;
			if (c->pattern == RSW_COLL_INCAST && (dst != c->root || i == c->root))
				continue;
			out[j++] = (struct rsw_coll_xfer){.src = (uint16_t)i, .dst = (uint16_t)dst,
							  .bytes = b, .dep = {-1, -1}};
		}
}

void rsw_coll_round(const struct rsw_coll *c, const struct rsw_coll_plan *p, uint64_t r,
		    struct rsw_coll_xfer *out)
{
	if (ring_like(c))
		ring_round(c, p, r, out);
	else if (c->pattern == RSW_COLL_TREE)
		tree_round(c, p, r, out);
	else
		spread_round(c, p, r, out);
}

unsigned rsw_coll_n_steps(const struct rsw_coll *c)
{
	if (ring_like(c))
		return ring_steps(c);
	return c->pattern == RSW_COLL_TREE ? 2 * level(c->n_ranks - 1) : 1;
}
