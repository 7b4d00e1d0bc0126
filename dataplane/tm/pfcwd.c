#include <string.h>

#include "counter.h"
#include "pfcwd.h"

static const char *const action_names[] = {"drop", "forward", "alert"};

const char *const rsw_pfcwd_stat_names[RSW_PFCWD_STATS] = {
	[RSW_PFCWD_STAT_DETECTED] = "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
	[RSW_PFCWD_STAT_RESTORED] = "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED",
	[RSW_PFCWD_STAT_TX_DROPPED] = "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS",
};

const char *rsw_pfcwd_action_name(unsigned action)
{
	return action < 3 ? action_names[action] : "?";
}

int rsw_pfcwd_action_from_name(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, action_names[i]) == 0)
			return i;
	return -1;
}

enum rsw_pfcwd_event rsw_pfcwd_poll(struct rsw_pfcwd *w, const struct rsw_pfcwd_cfg *cfg,
				    uint64_t paused_since_ns, uint64_t now_ns)
{
	if (!cfg->enabled)
		return RSW_PFCWD_NONE;
	if (w->storm) {
		if (now_ns - w->last_pfc_rx_ns >= cfg->restoration_ns) {
			w->storm = 0;
			RSW_CNT_ADD(w->storms_restored, 1);
			return RSW_PFCWD_RESTORED;
		}
		return RSW_PFCWD_NONE;
	}
	/* paused for the whole detection time, and PFC for it still arriving within it */
	if (paused_since_ns <= now_ns && now_ns - paused_since_ns >= cfg->detection_ns &&
	    now_ns - w->last_pfc_rx_ns < cfg->detection_ns) {
		w->storm = 1;
		RSW_CNT_ADD(w->storms_detected, 1);
		return RSW_PFCWD_DETECTED;
	}
	return RSW_PFCWD_NONE;
}
