/* Closed-loop hosts running a collective (replay_coll.c): its host ops, and what the run calls
 * to set it up and to end it. */
#ifndef RSW_REPLAY_COLL_H
#define RSW_REPLAY_COLL_H

#include <stddef.h>

#include "replay_engine.h"

extern const struct rp_host_ops rp_coll_ops;

int rp_coll_init(struct replay *r, char *err, size_t errlen);
void rp_coll_start(struct replay *r);
void rp_coll_finish(struct replay *r);
void rp_coll_free(struct replay *r);

#endif
