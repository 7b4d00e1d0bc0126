/* The PFC deadlocks a replay found (dataplane/replay/replay_deadlock.c) for summary.json and the
 * text summary: each cycle's members in order, when it formed, was found and ended, and the
 * flows whose frames were caught in it. */
#include <string.h>

#include "dataplane/pkt/addr.h"
#include "replay_summary.h"

#define J(v) json_integer((json_int_t)(v))

static const char *port_of(const struct rsw_zone *z, unsigned sw, unsigned port)
{
	return rsw_switch_fib(z->sw[sw].sw)->ports[port].name;
}

static json_t *flow_json(const struct rsw_replay_dl_flow *df)
{
	const struct rsw_flow_key *k = &df->key; /* (a part numbers its flows apart) */
	struct rsw_ip a = {.family = k->l3 == 2 ? 6 : 4}, b = a;
	char sa[64], sb[64];
	memcpy(a.a, k->src, 16);
	memcpy(b.a, k->dst, 16);
	return json_pack("{s:I, s:s, s:s, s:i, s:i, s:I, s:I}", "flow", (json_int_t)df->flow, "src",
			 rsw_ip_str(&a, sa, sizeof(sa)), "dst", rsw_ip_str(&b, sb, sizeof(sb)),
			 "sport", k->sport, "dport", k->dport, "dest_qp", (json_int_t)k->qp,
			 "frames", (json_int_t)df->frames);
}

json_t *rsw_replay_deadlocks_json(const struct rsw_zone *z, const struct rsw_replay_result *r)
{
	json_t *all = json_array();
	for (unsigned i = 0; i < r->n_deadlock; i++) {
		const struct rsw_replay_deadlock *d = &r->deadlock[i];
		json_t *o = json_object(), *cyc = json_array(), *fl = json_array();
		for (unsigned k = 0; k < d->n_member; k++) {
			const struct rsw_replay_dl_member *m = &d->member[k];
			json_array_append_new(cyc, json_pack(
				"{s:s, s:s, s:i, s:I, s:I}", "switch", z->sw[m->sw].name, "port",
				port_of(z, m->sw, m->port), "priority", m->prio, "frames",
				(json_int_t)m->frames, "bytes", (json_int_t)m->bytes));
		}
		for (unsigned k = 0; k < d->n_flow; k++)
			json_array_append_new(fl, flow_json(&d->flow[k]));
		json_object_set_new(o, "cycle", cyc);
		json_object_set_new(o, "formed_ns", J(d->formed_ns));
		json_object_set_new(o, "found_ns", J(d->found_ns));
		json_object_set_new(o, "held_ns", J(d->found_ns - d->formed_ns));
		json_object_set_new(o, "broken_ns", d->broken_ns ? J(d->broken_ns) : json_null());
		json_object_set_new(o, "flows", fl);
		json_array_append_new(all, o);
	}
	return all;
}

void rsw_replay_deadlocks_print(FILE *f, const struct rsw_zone *z,
				const struct rsw_replay_result *r)
{
	for (unsigned i = 0; i < r->n_deadlock; i++) {
		const struct rsw_replay_deadlock *d = &r->deadlock[i];
		uint64_t frames = 0;
		fprintf(f, "PFC deadlock formed at %.3f us (found at %.3f us, ", d->formed_ns / 1e3,
			d->found_ns / 1e3);
		if (d->broken_ns)
			fprintf(f, "broken at %.3f us", d->broken_ns / 1e3);
		else
			fprintf(f, "held to the end");
		fprintf(f, "): priority %u,", d->member[0].prio);
		for (unsigned k = 0; k < d->n_member; k++) {
			const struct rsw_replay_dl_member *m = &d->member[k];
			fprintf(f, " %s|%s ->", z->sw[m->sw].name, port_of(z, m->sw, m->port));
			frames += m->frames;
		}
		fprintf(f, " (each paused by the next); %lu frames of %u flows caught\n",
			(unsigned long)frames, d->n_flow);
	}
}
