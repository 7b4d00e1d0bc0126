/* A host playing its capture (replay_player.c): its host ops. */
#ifndef RSW_REPLAY_PLAYER_H
#define RSW_REPLAY_PLAYER_H

#include "replay_engine.h"

extern const struct rp_host_ops rp_player_ops;

#endif
