/* One part of a zone replayed apart (docs/replay-parallel.md): this process holds some switches
 * and hosts, runs their wake-ups on its own agenda in (time, entity) order, and hands each frame
 * put on a link whose receiver is held elsewhere to a carrier (ns-3's MPI interface in
 * rocesw-replay-mpi), which delivers it at its arrival time to the part holding the receiver.
 * The agenda is driven from outside: the carrier's engine asks for the next time this part has
 * something due and runs it, so remote frames are on the agenda before their time is run. */
#ifndef RSW_REPLAY_PART_H
#define RSW_REPLAY_PART_H

#include <stdint.h>

#include "dataplane/pkt/flow_table.h"
#include "replay.h"

struct rsw_replay_part {
	unsigned rank;            /* this part */
	const uint32_t *sw_rank;  /* the part holding each switch */
	const uint32_t *host_rank; /* and each host */
	/* a frame of len bytes put on link direction dir arrives whole at t at a receiver held by
	 * another part (flow: its flow's key, or NULL); data holds its first held bytes, all that
	 * anyone reads of it (rp_mbuf) */
	void (*send)(void *arg, unsigned dir, uint64_t t, const uint8_t *data, uint32_t held,
		     uint32_t len, const struct rsw_flow_key *flow);
	/* every part's len bytes (mine: this part's), in the order of their ranks, into *all
	 * (malloc'ed, *all_len bytes); every part calls it alike. Returns 0, or -1. */
	int (*gather)(void *arg, const void *mine, size_t len, char **all, size_t *all_len);
	void *arg;
};

struct replay;

/* Sets up the run of the part's switches and hosts (its captures in out_dir); NULL with a
 * message. Event-log lines start with their order key (rsw_replay_part_key_len). */
struct replay *rsw_replay_part_open(const struct rsw_replay_model *model, const char *out_dir,
				    const struct rsw_replay_opts *opts,
				    const struct rsw_replay_part *part,
				    struct rsw_replay_result *res, char *err, size_t errlen);
/* Time of the part's next wake-up, UINT64_MAX if none. */
uint64_t rsw_replay_part_next(const struct replay *r);
/* Runs every wake-up due at t (t: rsw_replay_part_next). Returns 0, or -1 when the run failed. */
int rsw_replay_part_run_at(struct replay *r, uint64_t t);
/* A frame of len bytes, its first held in data, from another part reaches the end of link
 * direction dir whole at t. */
void rsw_replay_part_deliver(struct replay *r, unsigned dir, uint64_t t, const uint8_t *data,
			     uint32_t held, uint32_t len, const struct rsw_flow_key *flow);
/* Time of the last wake-up the part ran (0: none). */
uint64_t rsw_replay_part_last(const struct replay *r);
/* Queue-depth samples of the part's switches at the period starts up to t, the time of the
 * zone's last wake-up (the largest rsw_replay_part_last of all parts), which a part's own
 * wake-ups may not reach: after its last one, its queues stay as they are. Before
 * rsw_replay_part_close, so that the event log holds what the sequential replay's does. */
void rsw_replay_part_sample_to(struct replay *r, uint64_t t);
/* The PFC deadlock detector's grid (docs/replay-parallel.md, "PFC deadlocks"), run by the
 * carrier on every part alike: at each point, before any wake-up of its time, whether this part
 * sent a PFC frame or its watchdog acted since the last point (armed); then the point, told
 * whether any part was armed (rsw_replay_part_dl_at, see rp_deadlock_at: the run's points with
 * sample 1, those of a cut run's end with upto the cut and sample 0); at the end of the run,
 * before rsw_replay_part_close, the check at its cut or its last frame, the latest of any part.
 * They exchange what each part reads through part->gather. Each returns 0, or -1 (out of
 * memory, or the exchange failed). */
uint64_t rsw_replay_part_dl_next(const struct replay *r);
int rsw_replay_part_dl_armed(const struct replay *r);
int rsw_replay_part_dl_at(struct replay *r, uint64_t at, int armed, uint64_t upto, int sample);
int rsw_replay_part_dl_end(struct replay *r, uint64_t end);
/* Ends the run (cut at until_ns if not 0): the part's results in res. Returns 0, or -1 with a
 * message (then res holds nothing). */
int rsw_replay_part_close(struct replay *r, uint64_t cut_ns, int ok);

/* Each event-log line of a part begins with its order key, this many characters: the time and
 * entity of the wake-up that wrote it and the line's number within it, in hexadecimal, so that
 * lines of several parts merged by key are in the order one process would have written them. */
#define RSW_REPLAY_PART_KEY_LEN 33

#endif
