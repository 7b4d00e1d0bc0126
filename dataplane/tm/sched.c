#include <string.h>

#include "sched.h"

void rsw_sched_init(struct rsw_sched *s, const struct rsw_sched_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->type, cfg->type, sizeof(s->type));
	memcpy(s->weight, cfg->weight, sizeof(s->weight));
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
		if (s->type[q] != RSW_SCHED_STRICT && s->weight[q] == 0)
			s->weight[q] = 1;
		if (s->type[q] == RSW_SCHED_STRICT) {
			s->strict_order[s->n_strict++] = (uint8_t)q;
			s->strict_mask |= (uint8_t)(1u << q);
		}
	}
	/* insertion sort: higher priority first, then higher queue index */
	for (unsigned i = 1; i < s->n_strict; i++) {
		uint8_t q = s->strict_order[i];
		unsigned j = i;
		while (j > 0) {
			uint8_t p = s->strict_order[j - 1];
			if (cfg->priority[p] > cfg->priority[q] ||
			    (cfg->priority[p] == cfg->priority[q] && p > q))
				break;
			s->strict_order[j] = p;
			j--;
		}
		s->strict_order[j] = q;
	}
}

static inline int is_dwrr(const struct rsw_sched *s, unsigned q)
{
	return s->type[q] != RSW_SCHED_STRICT;
}

int rsw_sched_pick(struct rsw_sched *s, const uint32_t head_len[RSW_TM_QUEUES], uint8_t ready_in)
{
	uint8_t sr = ready_in & s->strict_mask;
	if (sr)
		for (unsigned i = 0; i < s->n_strict; i++)
			if (sr & (1u << s->strict_order[i]))
				return s->strict_order[i];
	/* DWRR: an empty queue's credit was dropped when it emptied (rsw_sched_charge) */
	unsigned ready = ready_in & (uint8_t)~s->strict_mask;
	if (!ready)
		return -1;
	if ((ready & (ready - 1)) == 0) {
		/* one queue to serve: it gets the link, whatever its deficit (as DRR would after
		 * enough rounds); its turn stays open so no quantum is granted twice */
		unsigned q = (unsigned)__builtin_ctz(ready);
		if (s->cur != q) {
			s->cur = (uint8_t)q;
			s->turn_open = 0;
		}
		if (!s->turn_open) {
			s->deficit[q] += s->weight[q] * RSW_DWRR_QUANTUM;
			s->turn_open = 1;
		}
		return (int)q;
	}
	/* Each full cycle adds a quantum to every ready queue, so a head of at most 64 KiB is
	 * reached within 64 cycles even at weight 1. */
	for (unsigned step = 0; step < 64u * RSW_TM_QUEUES + RSW_TM_QUEUES; step++) {
		unsigned q = s->cur;
		if (ready & (1u << q)) {
			if (!s->turn_open) {
				s->deficit[q] += s->weight[q] * RSW_DWRR_QUANTUM;
				s->turn_open = 1;
			}
			if (head_len[q] <= s->deficit[q])
				return (int)q;
		}
		s->cur = (uint8_t)((q + 1) % RSW_TM_QUEUES);
		s->turn_open = 0;
	}
	return -1;
}

void rsw_sched_charge(struct rsw_sched *s, int q, uint32_t len, int now_empty)
{
	if (q < 0 || !is_dwrr(s, (unsigned)q))
		return;
	s->deficit[q] = s->deficit[q] > len ? s->deficit[q] - len : 0;
	if (now_empty) {
		s->deficit[q] = 0;
		if (s->cur == q) {
			s->cur = (uint8_t)((q + 1) % RSW_TM_QUEUES);
			s->turn_open = 0;
		}
	}
}
