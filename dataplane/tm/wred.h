/* ECN marking for DCQCN (REFERENCE §3): on the instantaneous egress queue bytes q, no mark at or
 * below Kmin, probability Pmax·(q − Kmin)/(Kmax − Kmin) up to Kmax, every packet above. Only
 * ECN-capable packets are marked, and nothing is dropped by WRED here (ecn_all: mark instead of
 * drop). The random source is a seeded xorshift64*, so runs with the same seed are identical. */
#ifndef RSW_TM_WRED_H
#define RSW_TM_WRED_H

#include <stdint.h>

struct rsw_wred {
	uint8_t ecn;            /* marking enabled (SONiC `ecn: ecn_all`) */
	uint8_t mark_on_enqueue; /* default: mark on dequeue, as the reference simulator */
	uint64_t kmin, kmax;    /* bytes: green_min_threshold, green_max_threshold */
	uint32_t pmax_ppm;      /* green_drop_probability, in parts per million */
};

/* Uniform 32-bit draw from *state (never 0 state). */
static inline uint32_t rsw_rand32(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* Marking probability at q, in parts per million (0..1e6). */
uint32_t rsw_wred_prob_ppm(const struct rsw_wred *w, uint64_t q);

/* 1 if a packet meeting a queue of q bytes is to be marked CE (the caller checks ECT). */
static inline int rsw_wred_mark(const struct rsw_wred *w, uint64_t q, uint64_t *rng)
{
	if (!w->ecn || q <= w->kmin)
		return 0;
	uint32_t p = rsw_wred_prob_ppm(w, q);
	if (p >= 1000000u)
		return 1;
	/* draw in [0, 1e6) without modulo bias worth measuring: 32-bit draw scaled */
	return (uint32_t)(((uint64_t)rsw_rand32(rng) * 1000000u) >> 32) < p;
}

#endif
