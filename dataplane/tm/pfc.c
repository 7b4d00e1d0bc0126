#include <string.h>

#include "counter.h"
#include "pfc.h"

unsigned rsw_pfc_build(uint8_t *buf, const uint8_t src_mac[6], uint8_t class_enable,
		       const uint16_t time[RSW_PFC_PRIOS])
{
	static const uint8_t dst[6] = {0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
	memset(buf, 0, RSW_PFC_FRAME_LEN);
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src_mac, 6);
	buf[12] = 0x88;
	buf[13] = 0x08;
	buf[14] = 0x01; /* opcode 0x0101 */
	buf[15] = 0x01;
	buf[16] = 0;    /* class-enable vector: reserved byte, then bit i = priority i */
	buf[17] = class_enable;
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
		buf[18 + 2 * i] = (uint8_t)(time[i] >> 8);
		buf[19 + 2 * i] = (uint8_t)time[i];
	}
	return RSW_PFC_FRAME_LEN;
}

/* Moves a pause that ran out into paused_ns (once). */
static void settle(struct rsw_pause_state *ps, unsigned i, uint64_t now_ns)
{
	if (ps->until_ns[i] <= now_ns && ps->until_ns[i] > ps->start_ns[i]) {
		RSW_CNT_ADD(ps->paused_ns[i], ps->until_ns[i] - ps->start_ns[i]);
		RSW_CNT_SET(ps->start_ns[i], ps->until_ns[i]);
	}
}

void rsw_pause_clear(struct rsw_pause_state *ps, unsigned i, uint64_t now_ns)
{
	settle(ps, i, now_ns);
	if (now_ns < ps->until_ns[i]) {
		RSW_CNT_ADD(ps->paused_ns[i], now_ns - ps->start_ns[i]);
		RSW_CNT_SET(ps->start_ns[i], now_ns);
		RSW_CNT_SET(ps->until_ns[i], now_ns);
	}
}

void rsw_pause_rx(struct rsw_pause_state *ps, uint8_t class_enable, const uint16_t time[8],
		  int pause, uint64_t now_ns, uint32_t speed_mbps)
{
	rsw_pause_rx_since(ps, class_enable, time, pause, now_ns, now_ns, speed_mbps);
}

void rsw_pause_rx_since(struct rsw_pause_state *ps, uint8_t class_enable, const uint16_t time[8],
			int pause, uint64_t arrived_after_ns, uint64_t now_ns, uint32_t speed_mbps)
{
	if (pause)
		RSW_CNT_ADD(ps->pause_rx_frames, 1);
	for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
		if (!(class_enable & (1u << i)))
			continue;
		if (!pause)
			RSW_CNT_ADD(ps->rx_frames[i], 1);
		if (ps->ignore_mask & (1u << i))
			continue;
		uint16_t t = pause ? time[0] : time[i];
		if (t == 0) {
			rsw_pause_clear(ps, i, now_ns);
			continue;
		}
		/* the current pause goes on if the frame may have come before it ran out: only a
		 * look at the port after the expiry that found no frame proves a gap */
		int goes_on = ps->until_ns[i] > ps->start_ns[i] && arrived_after_ns < ps->until_ns[i];
		if (!goes_on) {
			settle(ps, i, now_ns);
			RSW_CNT_SET(ps->start_ns[i], now_ns);
		}
		RSW_CNT_SET(ps->until_ns[i], now_ns + rsw_pause_ns(t, speed_mbps));
		if (ps->until_ns[i] > ps->latest_until_ns)
			RSW_CNT_SET(ps->latest_until_ns, ps->until_ns[i]);
	}
}

uint64_t rsw_pause_since(const struct rsw_pause_state *ps, unsigned i, uint64_t now_ns)
{
	return now_ns < ps->until_ns[i] ? ps->start_ns[i] : UINT64_MAX;
}

uint64_t rsw_pause_total_ns(const struct rsw_pause_state *ps, unsigned i, uint64_t now_ns)
{
	/* also read by other threads than the port's owner (the control socket) */
	uint64_t t = RSW_CNT_GET(ps->paused_ns[i]), until = RSW_CNT_GET(ps->until_ns[i]);
	uint64_t start = RSW_CNT_GET(ps->start_ns[i]);
	uint64_t end = now_ns < until ? now_ns : until;
	if (end > start)
		t += end - start;
	return t;
}

enum rsw_pfc_action rsw_pfc_gen_poll(struct rsw_pfc_gen *g, int over_xoff, int below_xon,
				     uint64_t now_ns, uint64_t refresh_ns)
{
	if (!g->xoff) {
		if (!over_xoff)
			return RSW_PFC_NONE;
		g->xoff = 1;
		RSW_CNT_ADD(g->xoff_transitions, 1);
		g->last_sent_ns = now_ns;
		return RSW_PFC_SEND_XOFF;
	}
	if (below_xon) {
		g->xoff = 0;
		RSW_CNT_ADD(g->xon_transitions, 1);
		g->last_sent_ns = now_ns;
		return RSW_PFC_SEND_XON;
	}
	if (now_ns - g->last_sent_ns >= refresh_ns) {
		g->last_sent_ns = now_ns;
		return RSW_PFC_SEND_XOFF;
	}
	return RSW_PFC_NONE;
}
