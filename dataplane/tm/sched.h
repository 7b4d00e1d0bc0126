/* Egress scheduler of one port (SONiC SCHEDULER, REFERENCE §3): STRICT queues first, highest
 * priority first; then DWRR over the others by byte weights (deficit round robin, Shreedhar and
 * Varghese, as in Linux sch_drr). A queue that is empty or paused is not eligible: it is skipped,
 * never dropped, and a paused DWRR queue keeps its deficit. */
#ifndef RSW_TM_SCHED_H
#define RSW_TM_SCHED_H

#include <stdint.h>

#define RSW_TM_QUEUES 8
#define RSW_DWRR_QUANTUM 1024u /* bytes per weight unit and round */

enum rsw_sched_type { RSW_SCHED_DWRR = 0, RSW_SCHED_STRICT, RSW_SCHED_WRR };

struct rsw_sched_cfg {
	uint8_t type[RSW_TM_QUEUES];     /* enum rsw_sched_type; WRR is DWRR here (see docs) */
	uint8_t priority[RSW_TM_QUEUES]; /* STRICT: higher first; ties by higher queue index */
	uint8_t weight[RSW_TM_QUEUES];   /* DWRR: 1..100 */
};

/* What a pick reads, in one cache line (60 bytes): the priorities only order strict_order. */
struct rsw_sched {
	uint8_t type[RSW_TM_QUEUES];         /* cfg's */
	uint8_t weight[RSW_TM_QUEUES];       /* cfg's, at least 1 for a DWRR queue */
	uint8_t strict_order[RSW_TM_QUEUES]; /* strict queues, first served first */
	uint8_t n_strict;
	uint8_t strict_mask;
	uint8_t cur;                         /* DWRR queue whose turn it is */
	uint8_t turn_open;                   /* cur already received its quantum this turn */
	uint32_t deficit[RSW_TM_QUEUES];
};

void rsw_sched_init(struct rsw_sched *s, const struct rsw_sched_cfg *cfg);

/* Picks the queue to send from. head_len[q] is the length of queue q's head packet; ready has
 * bit q set when q has a packet and is not paused. Returns the queue or -1 if none can send. */
int rsw_sched_pick(struct rsw_sched *s, const uint32_t head_len[RSW_TM_QUEUES], uint8_t ready);

/* Charges len bytes sent from q; now_empty when q has no packet left. */
void rsw_sched_charge(struct rsw_sched *s, int q, uint32_t len, int now_empty);

#endif
