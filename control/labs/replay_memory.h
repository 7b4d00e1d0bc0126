/* DPDK memory for `rocesw replay`, from the switch configs it will compile. */
#ifndef RSW_REPLAY_MEMORY_H
#define RSW_REPLAY_MEMORY_H

#include <stdio.h>

/* MiB of DPDK memory for replaying config (a zone config if zone): EAL's own, the switches'
 * route tables, and the packets their buffers can hold, capped by the machine's available
 * memory (said on note when it is, unless note is NULL). Returns 0, or -1 with "needs N MiB"
 * in err when even the tables cannot fit. A config that does not compile gives 0 and a size
 * without it: loading the zone reports the error. */
int rsw_replay_dpdk_mb(const char *config, int zone, FILE *note, unsigned long *mb, char *err,
		       size_t errlen);

#endif
