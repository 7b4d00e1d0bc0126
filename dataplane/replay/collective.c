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

struct xset {
	const struct rsw_coll *c;
	struct rsw_coll_xfer *x;
	uint32_t n_x;
};

static int add_xfer(struct xset *L, unsigned src, unsigned dst, uint64_t bytes, uint32_t step,
		    int32_t dep0, int32_t dep1, uint32_t *cap)
{
	if (!bytes)
		return -2;
	if (L->n_x == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 256;
		void *p = realloc(L->x, nc * sizeof(*L->x));
		if (!p)
			return -1;
		L->x = p;
		*cap = nc;
	}
	struct rsw_coll_xfer *x = &L->x[L->n_x];
	memset(x, 0, sizeof(*x));
	x->src = (uint16_t)src;
	x->dst = (uint16_t)dst;
	x->bytes = bytes;
	x->step = step;
	x->dep[0] = dep0;
	x->dep[1] = dep1;
	return (int)L->n_x++;
}

/* Depth of rank i in the binary tree (root 0 at depth 0). */
static unsigned level(unsigned i)
{
	unsigned l = 0;
	for (i++; i > 1; i >>= 1)
		l++;
	return l;
}

/* Ring collectives as NCCL runs them: the buffer is cut into loops of N chunks; in each loop,
 * step s of rank i sends to rank i + 1 the chunk it received at step s - 1 (reduced or copied).
 * Loops run one after the other on each connection, and a loop's step waits only for its own
 * previous step, so loops pipeline. */
static int build_ring(struct xset *L, unsigned first, unsigned steps, uint64_t per_rank,
		      uint32_t *cap)
{
	const struct rsw_coll *c = L->c;
	unsigned n = c->n_ranks;
	uint64_t chunk = c->chunk && c->chunk < per_rank ? c->chunk : per_rank;
	uint64_t loops = (per_rank + chunk - 1) / chunk;
	for (uint64_t l = 0; l < loops; l++) {
		uint64_t b = l + 1 < loops ? chunk : per_rank - l * chunk;
		uint32_t base = L->n_x;
		for (unsigned s = 0; s < steps; s++)
			for (unsigned i = 0; i < n; i++) {
				/* rank i's step s needs rank i-1's step s-1 of this loop */
				int32_t dep = s ? (int32_t)(base + (s - 1) * n + (i + n - 1) % n) : -1;
				if (add_xfer(L, i, (i + 1) % n, b, first + s, dep, -1, cap) < 0)
					return -1;
			}
	}
	return 0;
}

/* Binary-tree AllReduce (parent of rank i is (i - 1) / 2), pipelined by chunks: a rank sends a
 * chunk up once both children's copies of it arrived, the root sends it down once reduced, and a
 * rank forwards it down once it came from its parent. Steps: reduce of level d is step depth - d,
 * broadcast to level d is step depth + d - 1. */
static int build_tree(struct xset *L, uint32_t *cap)
{
	const struct rsw_coll *c = L->c;
	unsigned n = c->n_ranks, depth = level(n - 1);
	uint64_t chunk = c->chunk && c->chunk < c->message ? c->chunk : c->message;
	uint64_t loops = (c->message + chunk - 1) / chunk;
	int32_t *up = malloc(n * sizeof(*up)), *down = malloc(n * sizeof(*down));
	if (!up || !down) {
		free(up);
		free(down);
		return -1;
	}
	int rc = 0;
	for (uint64_t l = 0; l < loops && rc == 0; l++) {
		uint64_t b = l + 1 < loops ? chunk : c->message - l * chunk;
		/* reduce, deepest ranks first so children come before parents */
		for (unsigned k = n; k-- > 1 && rc == 0;) {
			unsigned a = 2 * k + 1, bb = 2 * k + 2;
			int32_t d0 = a < n ? up[a] : -1, d1 = bb < n ? up[bb] : -1;
			up[k] = add_xfer(L, k, (k - 1) / 2, b, depth - level(k), d0, d1, cap);
			rc = up[k] < 0 ? -1 : 0;
		}
		for (unsigned k = 1; k < n && rc == 0; k++) {
			unsigned p = (k - 1) / 2;
			int32_t d0, d1 = -1;
			if (p == 0) { /* the root has both children's reductions */
				d0 = up[1];
				d1 = n > 2 ? up[2] : -1;
			} else {
				d0 = down[p];
			}
			down[k] = add_xfer(L, p, k, b, depth + level(k) - 1, d0, d1, cap);
			rc = down[k] < 0 ? -1 : 0;
		}
	}
	free(up);
	free(down);
	return rc;
}

static int build_all(struct xset *L)
{
	const struct rsw_coll *c = L->c;
	unsigned n = c->n_ranks;
	uint32_t cap = 0;
	switch (c->pattern) {
	case RSW_COLL_RING:
		return build_ring(L, 0, 2 * (n - 1), c->message / n, &cap);
	case RSW_COLL_REDUCE_SCATTER:
	case RSW_COLL_ALLGATHER:
		return build_ring(L, 0, n - 1, c->message / n, &cap);
	case RSW_COLL_TREE:
		return build_tree(L, &cap);
	case RSW_COLL_ALL_TO_ALL:
	case RSW_COLL_INCAST: {
		uint64_t per = c->pattern == RSW_COLL_ALL_TO_ALL ? c->message / n : c->message;
		uint64_t chunk = c->chunk && c->chunk < per ? c->chunk : per;
		for (uint64_t off = 0; off < per; off += chunk)
			for (unsigned i = 0; i < n; i++)
				for (unsigned k = 1; k < n; k++) {
					unsigned dst = (i + k) % n;
					if (c->pattern == RSW_COLL_INCAST &&
					    (dst != c->root || i == c->root))
						continue;
					uint64_t b = per - off < chunk ? per - off : chunk;
					if (add_xfer(L, i, dst, b, 0, -1, -1, &cap) == -1)
						return -1;
				}
		return 0;
	}
	}
	return -1;
}

unsigned rsw_coll_n_steps(const struct rsw_coll *c)
{
	unsigned n = c->n_ranks;
	switch (c->pattern) {
	case RSW_COLL_RING: return 2 * (n - 1);
	case RSW_COLL_REDUCE_SCATTER:
	case RSW_COLL_ALLGATHER: return n - 1;
	case RSW_COLL_TREE: return 2 * level(n - 1);
	default: return 1;
	}
}

int rsw_coll_xfers(const struct rsw_coll *c, struct rsw_coll_xfer **out, uint32_t *n)
{
	struct xset L = {.c = c};
	*out = NULL;
	*n = 0;
	if (build_all(&L) < 0) {
		free(L.x);
		return -1;
	}
	*out = L.x;
	*n = L.n_x;
	return 0;
}
