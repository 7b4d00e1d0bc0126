/* Byte-accurate port shaper: a port drains at its configured speed, counting what the wire carries
 * besides the frame the switch sees (REFERENCE §3): FCS (4), preamble + SFD (8), inter-frame gap
 * (12), and padding of short frames to the 64-byte minimum. Time is kept in picoseconds with the
 * division remainder carried, so no rate error accumulates (400G is 2.5 ps per bit). */
#ifndef RSW_TM_SHAPER_H
#define RSW_TM_SHAPER_H

#include <stdint.h>

#define RSW_WIRE_OVERHEAD 24u  /* FCS + preamble/SFD + IFG */
#define RSW_WIRE_MIN_FRAME 60u /* 64-byte minimum without FCS */
#define RSW_WIRE_IFG 12u

struct rsw_shaper {
	uint32_t speed_mbps;  /* 0: unshaped (`line`) */
	uint64_t next_free_ps; /* when the wire is free for the next frame */
	uint64_t rem;          /* remainder of bits * 1e6 / speed carried between frames */
	uint64_t burst_ps;     /* how far behind `now` an idle port may start (live polling slack) */
};

void rsw_shaper_init(struct rsw_shaper *s, uint32_t speed_mbps, uint64_t burst_ns);

/* Bytes a frame of len (without FCS) occupies on the wire. */
static inline uint32_t rsw_wire_bytes(uint32_t len)
{
	return (len < RSW_WIRE_MIN_FRAME ? RSW_WIRE_MIN_FRAME : len) + RSW_WIRE_OVERHEAD;
}

/* True if a frame may start at now. */
static inline int rsw_shaper_ready(const struct rsw_shaper *s, uint64_t now_ns)
{
	return s->speed_mbps == 0 || s->next_free_ps <= now_ns * 1000u;
}

/* When the wire is free for the next frame, in ns rounded up. */
static inline uint64_t rsw_shaper_free_ns(const struct rsw_shaper *s)
{
	return (s->next_free_ps + 999u) / 1000u;
}

/* Accounts a frame of len starting now (or when the wire frees, if later); returns the time in
 * ns at which its last bit leaves. */
uint64_t rsw_shaper_send(struct rsw_shaper *s, uint64_t now_ns, uint32_t len);

/* Wire time of a frame of len at speed, in ns rounded up (0 for an unshaped port, speed 0). */
static inline uint64_t rsw_wire_ns(uint32_t len, uint32_t speed_mbps)
{
	return speed_mbps ? ((uint64_t)rsw_wire_bytes(len) * 8000u + speed_mbps - 1) / speed_mbps : 0;
}

/* Time from the first bit of a frame's preamble to the last bit of its FCS at speed, in ns rounded
 * up: when a receiver has all of it (the wire time without the inter-frame gap). */
static inline uint64_t rsw_frame_ns(uint32_t len, uint32_t speed_mbps)
{
	return speed_mbps ? ((uint64_t)(rsw_wire_bytes(len) - RSW_WIRE_IFG) * 8000u + speed_mbps - 1) /
				    speed_mbps
			  : 0;
}

/* Time to serialize n bits at speed, in ps (rounded down). */
static inline uint64_t rsw_bits_ps(uint64_t bits, uint32_t speed_mbps)
{
	return bits * 1000000u / speed_mbps;
}

#endif
