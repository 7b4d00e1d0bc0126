/* DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015, Fig. 6; docs/dcqcn.md): a per-QP rate Rc with target Rt and congestion estimate
 * alpha. A CNP cuts Rc; an alpha timer decays alpha while no CNP comes; a rate-increase timer and
 * a byte counter raise Rc in fast recovery, additive and hyper increase. Pure state, no I/O, so
 * the same code can be checked against the published rules. */
#ifndef RSW_DCQCN_H
#define RSW_DCQCN_H

#include <stdint.h>

struct rsw_dcqcn_params {
	double g;                 /* alpha gain */
	uint64_t alpha_ns;        /* K: alpha decays every K without a CNP */
	uint64_t timer_ns;        /* T: rate-increase timer */
	uint64_t byte_counter;    /* B: rate-increase byte counter */
	unsigned f;               /* F: fast-recovery stages */
	double rai_mbps, rhai_mbps, min_mbps;
	uint64_t cnp_interval_ns; /* N: a receiver sends at most one CNP per QP per N */
};

struct rsw_dcqcn {
	double rc, rt, alpha;     /* Mb/s, Mb/s, 0..1 */
	double line;              /* the NIC's rate: at it, the QP is not limited */
	unsigned t_cnt, bc_cnt;   /* timer and byte-counter expiries since the last cut */
	uint64_t bytes;           /* sent since the last byte-counter expiry */
	uint64_t alpha_at, timer_at; /* next expiries, UINT64_MAX: not running */
	uint64_t cuts;
	double min_rc;
};

void rsw_dcqcn_defaults(struct rsw_dcqcn_params *p);
void rsw_dcqcn_init(struct rsw_dcqcn *s, double line_mbps);
/* A CNP at t. */
void rsw_dcqcn_cnp(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint64_t t);
/* Timers due at or before t fire, in time order. Returns 1 if the rate changed. */
int rsw_dcqcn_timers(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint64_t t);
/* bytes sent at t (the byte counter). Returns 1 if the rate changed. */
int rsw_dcqcn_sent(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint32_t bytes);
/* The next timer expiry, or UINT64_MAX. */
static inline uint64_t rsw_dcqcn_next(const struct rsw_dcqcn *s)
{
	return s->alpha_at < s->timer_at ? s->alpha_at : s->timer_at;
}

#endif
