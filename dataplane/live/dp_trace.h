/* The live packet trace (`rocesw trace add N`, `show trace`, `clear trace`; docs/control.md), as
 * VPP's: each worker lcore has its own bounded buffer and traces the next N frames it receives
 * through the same pipeline (pipeline/trace.h); the main lcore asks (add, clear) and reads
 * (show) over the control socket. Off, it costs a worker one load and compare per round and one
 * per received burst. */
#ifndef RSW_DP_TRACE_H
#define RSW_DP_TRACE_H

#include <stdint.h>

#include <jansson.h>

#include "dataplane/pipeline/pipeline.h"

/* Frames one worker's buffer holds: `trace add N` takes 1..RSW_DP_TRACE_MAX. */
#define RSW_DP_TRACE_MAX 256
/* Bytes of each traced frame kept as it arrived (before the rewrite). */
#define RSW_DP_TRACE_HEAD 64

struct rsw_dp;
struct rsw_dp_zone;

struct rsw_dp_trace_entry {
	uint64_t t_ns;
	const struct rsw_dp *dp; /* the switch that received it */
	uint16_t in_port;
	uint16_t n_head;
	uint32_t len;
	uint8_t head[RSW_DP_TRACE_HEAD];
	struct rsw_verdict v;
	struct rsw_trace tr;
};

struct rsw_dp_trace {
	/* the main lcore's request, published by bumping req (release) once add/clear are set */
	uint32_t req, req_add, req_clear;
	/* the worker's: the last request it applied (release), frames still to trace, entries
	 * written (release: entry i < n is complete) */
	uint32_t seen, left, n;
	struct rsw_dp_trace_entry e[RSW_DP_TRACE_MAX];
};

/* Worker, once a round: applies a pending request. */
static inline void rsw_dp_trace_poll(struct rsw_dp_trace *t)
{
	uint32_t req = __atomic_load_n(&t->req, __ATOMIC_ACQUIRE);
	if (__builtin_expect(req == t->seen, 1))
		return;
	uint32_t n = t->req_clear ? 0 : t->n, left = t->req_clear ? 0 : t->left;
	left += t->req_add;
	if (left > RSW_DP_TRACE_MAX - n)
		left = RSW_DP_TRACE_MAX - n;
	__atomic_store_n(&t->left, left, __ATOMIC_RELAXED); /* show reads it */
	__atomic_store_n(&t->n, n, __ATOMIC_RELEASE);
	__atomic_store_n(&t->seen, req, __ATOMIC_RELEASE);
}

/* Worker: the slot for the next traced frame of len bytes (its head copied), or NULL. */
struct rsw_trace *rsw_dp_trace_slot(struct rsw_dp_trace *t, const struct rsw_dp *dp,
				    uint16_t in_port, const uint8_t *frame, uint32_t len,
				    uint64_t now);
/* Worker: the slot's frame got verdict v: the entry is published. */
void rsw_dp_trace_done(struct rsw_dp_trace *t, const struct rsw_verdict *v);

/* Main lcore: every worker traces its next n frames too (added to what is left, as far as its
 * buffer holds), or (n 0, clear) drops what it holds. Waits until every worker took the request.
 * Returns 0, or -1 with a message. */
int rsw_dp_trace_request(struct rsw_dp_zone *z, unsigned n, int clear, char *err, size_t errlen);
/* Main lcore: every worker's entries, each stage's record as text. */
json_t *rsw_dp_trace_json(const struct rsw_dp_zone *z);

#endif
