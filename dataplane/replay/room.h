/* Growing arrays of replay's services and checks (the event log, the deadlock detector). */
#ifndef RSW_REPLAY_ROOM_H
#define RSW_REPLAY_ROOM_H

#include <stddef.h>
#include <stdlib.h>

/* Room for need elements of size bytes in *p, which has room for *cap: doubled from 64 until
 * they fit. Returns 0, or -1 out of memory (*p and *cap unchanged). */
static inline int rp_room(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *grown = realloc(*p, c * size);
	if (!grown)
		return -1;
	*p = grown;
	*cap = c;
	return 0;
}

#endif
