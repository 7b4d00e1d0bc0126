#include "wred.h"

uint32_t rsw_wred_prob_ppm(const struct rsw_wred *w, uint64_t q)
{
	if (q <= w->kmin)
		return 0;
	if (q > w->kmax || w->kmax <= w->kmin)
		return 1000000u;
	return (uint32_t)((__uint128_t)w->pmax_ppm * (q - w->kmin) / (w->kmax - w->kmin));
}
