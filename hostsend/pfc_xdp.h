/* What the PFC-watching XDP program (pfc_xdp.bpf.c) shares with `rocesw send`: one mmapable
 * array entry holding, per priority, the time until which the link partner paused it, and the
 * program's counters. Times are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns). */
#ifndef RSW_PFC_XDP_H
#define RSW_PFC_XDP_H

#include <linux/types.h>

#define RSW_PFC_PRIOS 8

struct rsw_pfc_xdp_state {
	__u64 link_mbps;                   /* set by user space: quanta → time */
	__u64 pause_until[RSW_PFC_PRIOS];  /* 0: not paused (XON, or never paused) */
	__u64 pfc_frames[RSW_PFC_PRIOS];   /* PFC frames whose class-enable vector had bit i */
	__u64 xoff[RSW_PFC_PRIOS];         /* of those, with a time > 0 */
	__u64 xon[RSW_PFC_PRIOS];          /* of those, with time 0 */
	__u64 pause_ns[RSW_PFC_PRIOS];     /* pause time requested, summed */
	__u64 pause_frames;                /* 802.3x PAUSE (all priorities) */
	__u64 mac_control_dropped;         /* every MAC control frame ends here (XDP_DROP) */
	__u64 mac_control_bad;             /* truncated or unknown opcode (dropped too) */
	__u64 passed;                      /* everything else (XDP_PASS) */
};

/* One quantum is 512 bit times (REFERENCE.md §2): quanta × 512 × 1000 / Mb/s nanoseconds. */
static inline __u64 rsw_pfc_quanta_ns(__u64 quanta, __u64 link_mbps)
{
	return link_mbps ? quanta * 512ULL * 1000ULL / link_mbps : 0;
}

#endif
