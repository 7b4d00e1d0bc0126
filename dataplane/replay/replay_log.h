/* Replay's event log: JSON lines, one per thing a node reports (docs/replay.md, "Outputs in
 * --out DIR"). A service the engine and every node write to; it calls nothing of theirs. */
#ifndef RSW_REPLAY_LOG_H
#define RSW_REPLAY_LOG_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* A line held until its nanosecond ends: its wake-up's entity (its id + 1; 0: the queue-depth
 * samples of a period's start, which come before every wake-up of that nanosecond), its number
 * within the wake-up, its place in the held bytes. */
struct rp_log_line {
	uint32_t id, lines;
	size_t off, len;
};

struct rp_log {
	FILE *f;          /* NULL: no event log */
	int keyed;        /* a part of a zone: each line starts with its order key (replay_part.h) */
	uint64_t t;       /* the wake-up being run, and the lines it wrote: the key of the next */
	uint32_t id, lines;
	/* The lines of nanosecond t, written when it ends in the order of their wake-ups' keys,
	 * whatever order the wake-ups ran in */
	char *held;
	size_t held_len, held_cap;
	struct rp_log_line *line;
	size_t n_line, line_cap;
	int oom;          /* a line could not be held: the run stops, out of memory */
};

/* The wake-up of entity id at t starts: the lines held of an earlier nanosecond are written. */
void rp_log_wake(struct rp_log *log, uint64_t t, uint32_t id);
/* The queue-depth samples of the period starting at t follow, before every wake-up of t. */
void rp_log_samples(struct rp_log *log, uint64_t t);
/* The PFC deadlock check of t follows: after the queue-depth samples of t, before every
 * wake-up of t. */
void rp_log_check(struct rp_log *log, uint64_t t);
/* The end of the run's lines follow, after every wake-up's. */
void rp_log_end(struct rp_log *log);
/* Numbers the next line of the wake-up running: in a part's log (keyed), its place among the
 * lines of that wake-up that other parts write (by default, one more than the last). */
static inline void rp_log_number(struct rp_log *log, uint32_t n)
{
	log->lines = n;
}
/* Writes the lines held, in their wake-ups' order. */
void rp_log_flush(struct rp_log *log);
/* Writes what is held and frees the holding. */
void rp_log_close(struct rp_log *log);

/* One line: {"t":NS,"event":KIND,[node_key:NODE,]["port":PORT,] ...fields}; takes fields. */
void rp_log_event(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		  const char *node, const char *port, json_t *fields);
/* The same line with integer and string fields only, written without building JSON objects:
 * for the events a run may log per packet (ECN marks, drops); byte for byte what rp_log_event
 * writes for the same fields. */
struct rp_field {
	const char *key;
	const char *s; /* a string value, or NULL: the number u */
	uint64_t u;
};
void rp_log_fields(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		   const char *node, const char *port, const struct rp_field *f, unsigned n);
/* A PFC or PAUSE frame sent or received: its class-enable vector and times. */
void rp_log_pfc(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		const char *node, const char *port, uint8_t enable, const uint16_t time[8]);

#endif
