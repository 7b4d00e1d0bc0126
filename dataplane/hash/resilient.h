/* Resilient (fine-grained) ECMP: a fixed table of buckets, each naming a member slot. Removing a
 * member hands only its buckets to the others; adding one takes buckets only from the most loaded.
 * Flows whose bucket did not change keep their path (REFERENCE §5). Control-path code. */
#ifndef RSW_RESILIENT_H
#define RSW_RESILIENT_H

#include <stdint.h>

#define RSW_ECMP_MAX_MEMBERS 256
#define RSW_RBT_MAX_BUCKETS 65536

struct rsw_rbt {
	uint32_t n_buckets;
	uint16_t n_slots;       /* slots ever used; a slot keeps its index for its lifetime */
	uint8_t active[RSW_ECMP_MAX_MEMBERS];
	uint16_t *bucket;       /* n_buckets entries, each an active slot */
};

/* An empty table (no active slot): the first rsw_rbt_add takes every bucket. */
int rsw_rbt_alloc(struct rsw_rbt *t, uint32_t n_buckets);
/* Buckets assigned round-robin over slots 0..n_active-1. Returns -1 on a bad size. */
int rsw_rbt_init(struct rsw_rbt *t, uint32_t n_buckets, uint16_t n_active);
/* Buckets assigned round-robin over the given slots (bucket b → slots[b % n]). */
int rsw_rbt_init_slots(struct rsw_rbt *t, uint32_t n_buckets, const uint16_t *slots, unsigned n);
int rsw_rbt_copy(struct rsw_rbt *dst, const struct rsw_rbt *src);
void rsw_rbt_free(struct rsw_rbt *t);
/* Deactivate slot: its buckets go, one at a time, to the least loaded active slot (lowest index on
 * ties). Removing the last active slot leaves the buckets pointing at it: callers check first. */
int rsw_rbt_remove(struct rsw_rbt *t, uint16_t slot);
/* Activate slot (any inactive slot index): it takes buckets, spread over the table, from the most
 * loaded slots until it holds n_buckets / n_active. */
int rsw_rbt_add(struct rsw_rbt *t, uint16_t slot);
unsigned rsw_rbt_n_active(const struct rsw_rbt *t);
/* Buckets held by slot. */
uint32_t rsw_rbt_load(const struct rsw_rbt *t, uint16_t slot);

#endif
