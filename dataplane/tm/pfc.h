/* PFC (802.1Qbb) and 802.3x PAUSE (REFERENCE §2): building the frames the switch sends, the pause
 * state of a port's egress queues when it receives them, and the XOFF/XON/refresh decision for a
 * lossless priority group. Time in ns from the caller (clock.h). */
#ifndef RSW_TM_PFC_H
#define RSW_TM_PFC_H

#include <stdint.h>

#define RSW_PFC_FRAME_LEN 60u      /* 64 on the wire with the FCS */
#define RSW_PFC_PRIOS 8
#define RSW_PFC_QUANTUM_BITS 512u

/* Writes a PFC frame (01:80:C2:00:00:01, EtherType 0x8808, opcode 0x0101, class-enable vector,
 * eight times, zero padding) into buf[RSW_PFC_FRAME_LEN]. Returns its length. */
unsigned rsw_pfc_build(uint8_t *buf, const uint8_t src_mac[6], uint8_t class_enable,
		       const uint16_t time[RSW_PFC_PRIOS]);

/* Duration of q pause quanta at a port speed, in ns rounded up (a pause never ends early). */
static inline uint64_t rsw_pause_ns(uint32_t quanta, uint32_t speed_mbps)
{
	uint64_t bits = (uint64_t)quanta * RSW_PFC_QUANTUM_BITS;
	return (bits * 1000u + speed_mbps - 1) / speed_mbps;
}

/* Pause state of one port's egress queues (written by the port's owner only). */
/* What every look reads first (a TM port keeps it in its first cache line, tm.h), then what a
 * paused port's looks read, then the counters. */
struct rsw_pause_state {
	uint64_t latest_until_ns;          /* >= every until_ns: after it nothing is paused, which
					    * is what most looks at a port find */
	uint64_t until_ns[RSW_PFC_PRIOS];  /* queue i is paused while now < until_ns[i] */
	uint8_t ignore_mask;               /* priorities whose received PFC is ignored (watchdog) */
	uint64_t start_ns[RSW_PFC_PRIOS];  /* start of the current continuous pause */
	uint64_t paused_ns[RSW_PFC_PRIOS]; /* time paused in pauses already over */
	uint64_t rx_frames[RSW_PFC_PRIOS]; /* PFC frames received with this priority enabled */
	uint64_t pause_rx_frames;          /* 802.3x PAUSE frames */
};

/* A received PFC frame at now on a port of speed_mbps: each enabled priority is paused for its
 * time × 512 bit times from now, or resumed at once for time 0. A PAUSE frame (pause = 1) applies
 * time[0] to every priority. Priorities in ignore_mask are counted but not paused. */
void rsw_pause_rx(struct rsw_pause_state *ps, uint8_t class_enable, const uint16_t time[8],
		  int pause, uint64_t now_ns, uint32_t speed_mbps);
/* The same for a frame seen at now that arrived at some time since arrived_after_ns (the
 * previous look at the port: a worker that stalled reads at once what arrived over the stall).
 * A frame that may have arrived before the current pause ran out continues it: the pause's start
 * (the watchdog's paused-since) is kept, and the gap counts as paused. */
void rsw_pause_rx_since(struct rsw_pause_state *ps, uint8_t class_enable, const uint16_t time[8],
			int pause, uint64_t arrived_after_ns, uint64_t now_ns, uint32_t speed_mbps);

static inline int rsw_pause_active(const struct rsw_pause_state *ps, unsigned prio,
				   uint64_t now_ns)
{
	return now_ns < ps->until_ns[prio];
}

/* Bit i set when priority i is paused at now. */
static inline uint8_t rsw_pause_mask(const struct rsw_pause_state *ps, uint64_t now_ns)
{
	uint8_t m = 0;
	if (now_ns >= ps->latest_until_ns)
		return 0;
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++)
		if (now_ns < ps->until_ns[i])
			m |= (uint8_t)(1u << i);
	return m;
}
/* Start of priority i's current continuous pause, or UINT64_MAX if it is not paused at now. */
uint64_t rsw_pause_since(const struct rsw_pause_state *ps, unsigned prio, uint64_t now_ns);
/* Total time priority i has been paused up to now (the pause-duration counter). */
uint64_t rsw_pause_total_ns(const struct rsw_pause_state *ps, unsigned prio, uint64_t now_ns);
/* Ends priority i's pause at once (the watchdog starts ignoring PFC for it). */
void rsw_pause_clear(struct rsw_pause_state *ps, unsigned prio, uint64_t now_ns);

/* PFC generation for one lossless (ingress port, PG), owned by the ingress port's worker. */
struct rsw_pfc_gen {
	uint8_t xoff;          /* an XOFF is in force at the peer */
	uint64_t last_sent_ns;
	uint64_t xoff_transitions, xon_transitions;
	uint64_t tx_frames;    /* SAI_PORT_STAT_PFC_<p>_TX_PKTS */
};

enum rsw_pfc_action { RSW_PFC_NONE = 0, RSW_PFC_SEND_XOFF, RSW_PFC_SEND_XON };

/* Decides what to send now. over_xoff: the PG is above its XOFF point; below_xon: it is below its
 * XON point. An XOFF is refreshed every refresh_ns while still not below XON (refresh_ns is less
 * than the pause time, so the peer never resumes early); XON (time 0) is sent once on falling
 * below XON. The caller sends the frame and counts it. */
enum rsw_pfc_action rsw_pfc_gen_poll(struct rsw_pfc_gen *g, int over_xoff, int below_xon,
				     uint64_t now_ns, uint64_t refresh_ns);

#endif
