/* The ns-3 side of rocesw-replay-mpi (replay_ns3.cc): ns-3's distributed simulator owns the MPI
 * ranks, their synchronisation and the frames that cross ranks; the replay's part of this rank
 * (replay_mpi.c) runs inside it. Plain C types only: the C++ side sees no DPDK header. */
#ifndef RSW_REPLAY_NS3_H
#define RSW_REPLAY_NS3_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Before anything else: picks the synchronisation (null_messages: 0 granted time window, 1 null
 * messages) and starts MPI through ns-3. */
void rsw_ns3_init(int *argc, char ***argv, int null_messages);
unsigned rsw_ns3_rank(void);
unsigned rsw_ns3_size(void);
/* A remote point-to-point channel between ranks a and b whose delay (the lookahead between them)
 * is delay_ns; called on every rank alike, for each pair of ranks that share a link. */
void rsw_ns3_pair(unsigned a, unsigned b, uint64_t delay_ns);
/* Room for a message of len bytes (written at once, before any other call) for rank `to`,
 * delivered there before rx_ns (a frame's arrival time): it waits in a batch for that rank and
 * leaves with it (replay_ns3.cc). */
void *rsw_ns3_frame(unsigned to, uint64_t rx_ns, size_t len);
/* Runs the ranks until none has anything due up to stop_ns (0: no end). Calls back rsw_mpi_*
 * below. */
void rsw_ns3_run(uint64_t stop_ns);
void rsw_ns3_abort(void);
void rsw_ns3_finish(void);
/* MPI collectives used to merge the ranks' outputs at the end */
void rsw_ns3_sum_u64(uint64_t *v, size_t n);
void rsw_ns3_max_u64(uint64_t *v, size_t n);
void rsw_ns3_min_u64(uint64_t *v, size_t n);
/* Rank 0 receives the bytes of every rank in rank order (*out malloc'ed, lens[rank]). */
void rsw_ns3_gather(const void *data, size_t len, char **out, size_t *lens);
/* Every rank receives the bytes of every rank in rank order (*out malloc'ed, *out_len bytes).
 * Returns 0, or -1. */
int rsw_ns3_allgather(const void *data, size_t len, char **out, size_t *out_len);

/* replay_mpi.c, called from the simulator */
uint64_t rsw_mpi_next(void);
int rsw_mpi_run_at(uint64_t t);
/* a frame from another rank onto the agenda: its arrival time */
uint64_t rsw_mpi_receive(const void *msg, size_t len);
/* the PFC deadlock grid (replay_part.h): its next point, whether this rank is armed, the point
 * at t when any rank was */
uint64_t rsw_mpi_dl_next(void);
int rsw_mpi_dl_armed(void);
void rsw_mpi_dl_at(uint64_t t, int armed);

#ifdef __cplusplus
}
#endif

#endif
