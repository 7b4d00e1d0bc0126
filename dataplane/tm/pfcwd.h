/* PFC watchdog of one (port, queue), as SONiC pfcwd (REFERENCE §2): a storm is a queue that stays
 * paused, with PFC frames for it still arriving, for the whole detection time; it is restored once
 * no PFC frame arrived for the restoration time. Polled by the port's owner every poll interval;
 * the caller applies the action and logs the events. */
#ifndef RSW_TM_PFCWD_H
#define RSW_TM_PFCWD_H

#include <stdint.h>

enum rsw_pfcwd_action { RSW_PFCWD_DROP = 0, RSW_PFCWD_FORWARD, RSW_PFCWD_ALERT };

struct rsw_pfcwd_cfg {
	uint8_t enabled;
	uint8_t action;           /* enum rsw_pfcwd_action */
	uint64_t detection_ns;    /* SONiC default 200 ms */
	uint64_t restoration_ns;  /* SONiC default 200 ms */
};

struct rsw_pfcwd {
	uint8_t storm;
	uint64_t last_pfc_rx_ns;  /* last PFC frame received for this priority */
	uint64_t storms_detected, storms_restored;
	uint64_t dropped_packets; /* drop action: queued packets flushed and new ones refused */
};

enum rsw_pfcwd_event { RSW_PFCWD_NONE = 0, RSW_PFCWD_DETECTED, RSW_PFCWD_RESTORED };

/* Called for every received PFC frame that enables this priority. */
static inline void rsw_pfcwd_pfc_rx(struct rsw_pfcwd *w, uint64_t now_ns)
{
	w->last_pfc_rx_ns = now_ns;
}

/* One poll. paused_since_ns: start of the queue's current continuous pause (rsw_pause_since),
 * or UINT64_MAX when it is not paused now. */
enum rsw_pfcwd_event rsw_pfcwd_poll(struct rsw_pfcwd *w, const struct rsw_pfcwd_cfg *cfg,
				    uint64_t paused_since_ns, uint64_t now_ns);

/* SONiC's per-queue watchdog counters (COUNTERS_DB, `show pfcwd stats`), as live and replay
 * report them (rsw_tm_pfcwd_stats): storms detected and restored, and packets the drop action
 * discarded, flushed from the queue or refused at admission. */
enum { RSW_PFCWD_STAT_DETECTED = 0, RSW_PFCWD_STAT_RESTORED, RSW_PFCWD_STAT_TX_DROPPED,
       RSW_PFCWD_STATS };
extern const char *const rsw_pfcwd_stat_names[RSW_PFCWD_STATS];

const char *rsw_pfcwd_action_name(unsigned action);
int rsw_pfcwd_action_from_name(const char *s); /* -1 if unknown */

#endif
