/* DCQCN reaction point: the rules of Zhu et al. (SIGCOMM 2015) Fig. 6 / Algorithm 1, checked
 * against HPCC's ns-3 implementation (rdma-hw.cc, the "Mellanox" DCQCN: UpdateAlphaMlx,
 * CheckRateDecreaseMlx, FastRecoveryMlx, ActiveIncreaseMlx, HyperIncreaseMlx); docs/dcqcn.md. */
#include <stdint.h>

#include "dcqcn.h"

void rsw_dcqcn_defaults(struct rsw_dcqcn_params *p)
{
	p->g = 1.0 / 256;
	p->alpha_ns = 55000;
	p->timer_ns = 55000;
	p->byte_counter = 10u << 20;
	p->f = 5;
	p->rai_mbps = 40;
	p->rhai_mbps = 400;
	p->min_mbps = 100;
	p->cnp_interval_ns = 50000;
}

void rsw_dcqcn_init(struct rsw_dcqcn *s, double line_mbps)
{
	*s = (struct rsw_dcqcn){.rc = line_mbps, .rt = line_mbps, .alpha = 1.0, .line = line_mbps,
				.alpha_at = UINT64_MAX, .timer_at = UINT64_MAX, .min_rc = line_mbps};
}

void rsw_dcqcn_cnp(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint64_t t)
{
	s->rt = s->rc;
	s->rc *= 1 - s->alpha / 2;
	if (s->rc < p->min_mbps)
		s->rc = p->min_mbps;
	s->alpha = (1 - p->g) * s->alpha + p->g;
	s->t_cnt = s->bc_cnt = 0;
	s->bytes = 0;
	s->alpha_at = t + p->alpha_ns;
	s->timer_at = t + p->timer_ns;
	s->cuts++;
	if (s->rc < s->min_rc)
		s->min_rc = s->rc;
}

/* One rate-increase event (after a timer or byte-counter expiry was counted). */
static void increase(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p)
{
	unsigned hi = s->t_cnt > s->bc_cnt ? s->t_cnt : s->bc_cnt;
	unsigned lo = s->t_cnt < s->bc_cnt ? s->t_cnt : s->bc_cnt;
	if (hi < p->f) {
		/* fast recovery: Rc halves its distance to Rt */
	} else if (lo > p->f) {
		s->rt += (lo - p->f) * p->rhai_mbps; /* hyper increase, i = min(T, BC) - F */
	} else {
		s->rt += p->rai_mbps; /* additive increase */
	}
	if (s->rt > s->line)
		s->rt = s->line;
	s->rc = (s->rt + s->rc) / 2;
	if (s->line - s->rc < 1e-6) { /* back at line rate: the rate limiter is released */
		s->rc = s->rt = s->line;
		s->timer_at = UINT64_MAX;
	}
}

int rsw_dcqcn_timers(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint64_t t)
{
	int changed = 0;
	while (rsw_dcqcn_next(s) <= t) {
		if (s->alpha_at <= s->timer_at) {
			s->alpha = (1 - p->g) * s->alpha;
			s->alpha_at = s->rc < s->line ? s->alpha_at + p->alpha_ns : UINT64_MAX;
		} else {
			s->timer_at += p->timer_ns;
			s->t_cnt++;
			increase(s, p);
			changed = 1;
		}
	}
	return changed;
}

int rsw_dcqcn_sent(struct rsw_dcqcn *s, const struct rsw_dcqcn_params *p, uint32_t bytes)
{
	if (s->rc >= s->line)
		return 0;
	s->bytes += bytes;
	if (s->bytes < p->byte_counter)
		return 0;
	s->bytes -= p->byte_counter;
	s->bc_cnt++;
	increase(s, p);
	return 1;
}
