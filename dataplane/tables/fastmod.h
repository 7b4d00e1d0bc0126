/* x % d without a division, for the tables' per-packet bucket and flowlet indexes. */
#ifndef RSW_FASTMOD_H
#define RSW_FASTMOD_H

#include <stdint.h>

/* Exact x % d without a division (Lemire, Kaser, Kurz 2019): m = UINT64_MAX / d + 1. */
static inline uint32_t rsw_fastmod(uint32_t x, uint64_t m, uint32_t d)
{
	return (uint32_t)(((__uint128_t)(m * x) * d) >> 64);
}

#endif
