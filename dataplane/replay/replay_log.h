/* Replay's event log: JSON lines, one per thing a node reports (docs/replay.md, "Outputs in
 * --out DIR"). A service the engine and every node write to; it calls nothing of theirs. */
#ifndef RSW_REPLAY_LOG_H
#define RSW_REPLAY_LOG_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct rp_log {
	FILE *f;          /* NULL: no event log */
	int keyed;        /* a part of a zone: each line starts with its order key (replay_part.h) */
	uint64_t t;       /* the wake-up being run, and the lines it wrote: the key of the next */
	uint32_t id, lines;
};

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
