#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp_ctx.h"
#include "dp_trace.h"
#include "dp_zone.h"

struct rsw_trace *rsw_dp_trace_slot(struct rsw_dp_trace *t, const struct rsw_dp *dp,
				    uint16_t in_port, const uint8_t *frame, uint32_t len,
				    uint64_t now)
{
	if (!t->left)
		return NULL;
	struct rsw_dp_trace_entry *e = &t->e[t->n];
	e->t_ns = now;
	e->dp = dp;
	e->in_port = in_port;
	e->len = len;
	e->n_head = (uint16_t)(len < RSW_DP_TRACE_HEAD ? len : RSW_DP_TRACE_HEAD);
	memcpy(e->head, frame, e->n_head);
	return &e->tr;
}

void rsw_dp_trace_done(struct rsw_dp_trace *t, const struct rsw_verdict *v)
{
	t->e[t->n].v = *v;
	__atomic_store_n(&t->left, t->left - 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
}

int rsw_dp_trace_request(struct rsw_dp_zone *z, unsigned n, int clear, char *err, size_t errlen)
{
	for (unsigned w = 0; w < z->n_workers; w++) {
		struct rsw_dp_trace *t = z->lc[w].trace;
		t->req_add = n;
		t->req_clear = (uint32_t)clear;
		__atomic_store_n(&t->req, t->req + 1, __ATOMIC_RELEASE);
	}
	/* the workers take it within a round (a sleeping one within its longest back-off) */
	for (unsigned tries = 0; tries < 20000; tries++) {
		unsigned taken = 0;
		for (unsigned w = 0; w < z->n_workers; w++) {
			struct rsw_dp_trace *t = z->lc[w].trace;
			taken += __atomic_load_n(&t->seen, __ATOMIC_ACQUIRE) == t->req;
		}
		if (taken == z->n_workers)
			return 0;
		usleep(50);
	}
	snprintf(err, errlen, "a worker did not take the trace request within a second");
	return -1;
}

static void hex(const uint8_t *b, unsigned n, char *out)
{
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * n] = 0;
}

static json_t *entry_json(const struct rsw_dp_zone *z, const struct rsw_dp_trace_entry *e)
{
	const struct rsw_fib *fib = rsw_switch_fib(e->dp->sw);
	json_t *lines = json_array();
	for (unsigned i = 0; i < e->tr.n; i++) {
		char line[512];
		rsw_trace_rec_format(&e->tr, &e->tr.rec[i], fib, line, sizeof(line));
		json_array_append_new(lines, json_string(line));
	}
	char data[2 * RSW_DP_TRACE_HEAD + 1], port[16];
	hex(e->head, e->n_head, data);
	snprintf(port, sizeof(port), "port %u", e->in_port);
	json_t *o = json_object();
	json_object_set_new(o, "t_ns", json_integer((json_int_t)e->t_ns));
	if (z->model && e->dp->name)
		json_object_set_new(o, "switch", json_string(e->dp->name));
	json_object_set_new(o, "port", json_string(fib && e->in_port < fib->n_ports
							   ? fib->ports[e->in_port].name : port));
	json_object_set_new(o, "len", json_integer(e->len));
	json_object_set_new(o, "data", json_string(data));
	json_object_set_new(o, "verdict", json_string(rsw_verdict_name(&e->v)));
	json_object_set_new(o, "trace", lines);
	return o;
}

json_t *rsw_dp_trace_json(const struct rsw_dp_zone *z)
{
	json_t *workers = json_array();
	for (unsigned w = 0; w < z->n_workers; w++) {
		const struct rsw_dp_trace *t = z->lc[w].trace;
		/* entries below n are complete and stay until the next request, which only this
		 * (main) thread makes */
		uint32_t n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
		json_t *pk = json_array();
		for (uint32_t i = 0; i < n; i++)
			json_array_append_new(pk, entry_json(z, &t->e[i]));
		json_array_append_new(workers, json_pack("{s:i, s:i, s:i, s:o}", "worker", (int)w,
							 "lcore", (int)z->lc[w].lcore, "left",
							 (int)__atomic_load_n(&t->left,
									      __ATOMIC_RELAXED),
							 "packets", pk));
	}
	return json_pack("{s:i, s:o}", "max", RSW_DP_TRACE_MAX, "workers", workers);
}
