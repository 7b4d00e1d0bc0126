/* How `rocesw replay`'s command runs its model: in this process (rsw_replay_run), or, in
 * rocesw-replay-mpi, partitioned over MPI ranks (replay_mpi.c). */
#ifndef RSW_REPLAY_RUNNER_H
#define RSW_REPLAY_RUNNER_H

#include <stddef.h>

#include "dataplane/replay/replay.h"

typedef int rsw_replay_runner_fn(const struct rsw_replay_model *model, const char *out_dir,
				 const struct rsw_replay_opts *opts, struct rsw_replay_result *res,
				 char *err, size_t errlen);

/* NULL: rsw_replay_run */
extern rsw_replay_runner_fn *rsw_replay_runner;
/* This process's rank: only rank 0 writes the event log, summary, report and text */
extern unsigned rsw_replay_rank;

#endif
