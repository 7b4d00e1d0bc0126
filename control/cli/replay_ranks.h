/* rocesw replay --ranks N: the replay partitioned over MPI ranks (replay_ranks.c). */
#ifndef RSW_REPLAY_RANKS_H
#define RSW_REPLAY_RANKS_H

/* With --ranks, --sync or --hostfile among argv: runs mpirun over rocesw-replay-mpi (returns
 * only if it could not, with the exit status), or refuses them in rocesw-replay-mpi itself
 * (in_mpi). Returns -1 without them. */
int rsw_replay_ranks(int argc, char **argv, int in_mpi);

#endif
