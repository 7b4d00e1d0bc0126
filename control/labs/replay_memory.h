/* DPDK memory for `rocesw replay`, from the switch configs it will compile. */
#ifndef RSW_REPLAY_MEMORY_H
#define RSW_REPLAY_MEMORY_H

#include <stdio.h>

/* MiB of DPDK memory to start replaying config with (a zone config if zone): EAL's own, the first
 * packet pools and the switches' route tables; packet memory beyond grows during the run
 * (dataplane/replay/replay_mem.c). Says on note (unless NULL) when the switches' buffers could
 * hold more packets than the machine has available. Returns 0, or -1 with "needs N MiB" in err
 * when even the start cannot fit. A config that does not compile gives 0 and 1024: loading the
 * zone reports the error. */
int rsw_replay_dpdk_mb(const char *config, int zone, FILE *note, unsigned long *mb, char *err,
		       size_t errlen);

#endif
