/* Failures during a replay and a controller's scheduled table writes (replay_fault.c). */
#ifndef RSW_REPLAY_FAULT_H
#define RSW_REPLAY_FAULT_H

#include <stdint.h>

struct replay;

/* Puts the failure agenda's first time on the agenda. */
void rp_fault_start(struct replay *r);
/* The engine's op (struct rp_node_ops): what is due at t. */
void rp_fault_due(struct replay *r, uint64_t t);

#endif
