#include "shaper.h"

void rsw_shaper_init(struct rsw_shaper *s, uint32_t speed_mbps, uint64_t burst_ns)
{
	s->speed_mbps = speed_mbps;
	s->next_free_ps = 0;
	s->rem = 0;
	s->burst_ps = burst_ns * 1000u;
}

uint64_t rsw_shaper_send(struct rsw_shaper *s, uint64_t now_ns, uint32_t len)
{
	uint64_t now_ps = now_ns * 1000u;
	if (s->speed_mbps == 0)
		return now_ns;
	/* An idle wire starts at now; a backlogged one right after the previous frame, even if
	 * the caller polls late (up to burst_ps), so the average rate is exact. */
	uint64_t earliest = now_ps > s->burst_ps ? now_ps - s->burst_ps : 0;
	if (s->next_free_ps < earliest) {
		s->next_free_ps = earliest;
		s->rem = 0;
	}
	uint64_t num = (uint64_t)rsw_wire_bytes(len) * 8u * 1000000u + s->rem;
	s->next_free_ps += num / s->speed_mbps;
	s->rem = num % s->speed_mbps;
	return rsw_shaper_free_ns(s);
}
