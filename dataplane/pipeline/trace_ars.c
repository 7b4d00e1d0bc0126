/* The ARS record of a trace (trace.h): what the ARS step saw (the flowlet entry, each
 * candidate's quality) and why it chose its member, as the step recorded it (ars.c), never
 * recomputed here. docs/ars.md "Explain". */
#include <inttypes.h>
#include <stdio.h>

#include <jansson.h>

#include "trace_ars.h"

static const char *const why_names[] = {
	[RSW_ARS_WHY_NOT_MATCHED] = "not_matched", [RSW_ARS_WHY_TABLE_FULL] = "table_full",
	[RSW_ARS_WHY_KEPT] = "kept",               [RSW_ARS_WHY_BEST] = "best_band",
	[RSW_ARS_WHY_TIE] = "tie_seeded",          [RSW_ARS_WHY_RANDOM] = "random",
};

static const struct rsw_fib_group *ars_group(const struct rsw_trace *tr,
					     const struct rsw_fib *fib)
{
	const struct rsw_trace_rec *e = rsw_trace_find(tr, RSW_TR_ECMP);
	if (!e || !rsw_trace_find(tr, RSW_TR_ARS) || !fib || e->u.ecmp.group >= fib->n_groups)
		return NULL;
	const struct rsw_fib_group *g = &fib->groups[e->u.ecmp.group];
	return g->ars ? g : NULL;
}

static const char *port_name(const struct rsw_fib *fib, unsigned port)
{
	return port < fib->n_ports ? fib->ports[port].name : "?";
}

/* Time since the entry's flow was last seen, or 0 (empty entry, or not before now). */
static uint64_t elapsed(const struct rsw_ars_decision *d)
{
	return d->entry_valid && d->now_ns > d->last_ns ? d->now_ns - d->last_ns : 0;
}

static int per_packet(const struct rsw_ars_decision *d)
{
	return d->mode == RSW_ARS_PER_PACKET_QUALITY || d->mode == RSW_ARS_PER_PACKET_RANDOM;
}

#define PUT(...) (o += (size_t)snprintf(out + o, o < cap ? cap - o : 0, __VA_ARGS__))
#define US(ns) ((double)(ns) / 1000.0)

/* The flowlet entry before the packet, in words. */
static size_t entry_words(const struct rsw_ars_decision *d, char *out, size_t cap)
{
	size_t o = 0;
	if (!d->entry_valid)
		PUT("entry %u empty: a new flow", d->entry);
	else if (d->entry_own)
		PUT("entry %u held by this flow on member %u, last seen %.3f us ago (idle time "
		    "%.3f us)", d->entry, d->held_slot, US(elapsed(d)), US(d->idle_ns));
	else
		PUT("entry %u held by another flow (hash 0x%04x) last seen %.3f us ago (idle time "
		    "%.3f us)", d->entry, d->entry_hash, US(elapsed(d)), US(d->idle_ns));
	if (d->held_down)
		PUT(", its member is down");
	if (!per_packet(d) && d->why != RSW_ARS_WHY_NOT_MATCHED && d->entry_valid)
		PUT(d->new_flowlet ? ": a new flowlet" : d->why == RSW_ARS_WHY_TABLE_FULL
							 ? ": still active" : ": the same flowlet");
	return o;
}

/* Why the member was chosen, in words. */
static size_t why_words(const struct rsw_ars_decision *d, const struct rsw_ars_group *a,
			char *out, size_t cap)
{
	size_t o = 0;
	switch (d->why) {
	case RSW_ARS_WHY_NOT_MATCHED:
		PUT("not ARS traffic for object %s: the static member %u", a->cfg.name,
		    d->chosen_slot);
		break;
	case RSW_ARS_WHY_TABLE_FULL:
		PUT("flowlet table full at this entry: the static member %u", d->chosen_slot);
		break;
	case RSW_ARS_WHY_KEPT:
		PUT(d->mode == RSW_ARS_FIXED ? "fixed: the flow keeps member %u"
					     : "within the idle time: keeps member %u",
		    d->chosen_slot);
		break;
	case RSW_ARS_WHY_BEST:
		PUT("member %u alone has the lowest band %u", d->chosen_slot, d->best_band);
		break;
	case RSW_ARS_WHY_TIE:
		PUT("%u members share the lowest band %u: the group's seeded draw picked member %u",
		    d->n_tied, d->best_band, d->chosen_slot);
		break;
	case RSW_ARS_WHY_RANDOM:
		PUT("random: the group's seeded draw picked member %u", d->chosen_slot);
		break;
	}
	return o;
}

void rsw_trace_ars_line(const struct rsw_trace *tr, const struct rsw_fib *fib, char *out,
			size_t cap)
{
	const struct rsw_fib_group *g = ars_group(tr, fib);
	const struct rsw_ars_decision *d = &tr->ars;
	size_t o = 0;
	PUT("ars: %s", rsw_ars_mode_name(d->mode));
	if (!g) {
		PUT(", member %u", d->chosen_slot);
		return;
	}
	if (d->why != RSW_ARS_WHY_NOT_MATCHED) {
		PUT(", ");
		o += entry_words(d, out + (o < cap ? o : cap), o < cap ? cap - o : 0);
	}
	if (d->why >= RSW_ARS_WHY_BEST) {
		PUT("; bands");
		for (unsigned k = 0; k < d->n_active && k < RSW_ARS_DECISION_MEMBERS; k++)
			PUT(" %u:%u", d->q[k].slot, d->q[k].band);
	}
	PUT("; ");
	why_words(d, g->ars, out + (o < cap ? o : cap), o < cap ? cap - o : 0);
}

json_t *rsw_trace_ars_json(const struct rsw_trace *tr, const struct rsw_fib *fib)
{
	const struct rsw_fib_group *g = ars_group(tr, fib);
	if (!g)
		return NULL;
	const struct rsw_ars_decision *d = &tr->ars;
	const struct rsw_trace_rec *e = rsw_trace_find(tr, RSW_TR_ECMP);
	char words[512];
	json_t *o = json_object();
	json_object_set_new(o, "object", json_string(g->ars->cfg.name));
	json_object_set_new(o, "mode", json_string(rsw_ars_mode_name(d->mode)));
	json_object_set_new(o, "flowlet_entry", json_integer(d->entry));
	json_object_set_new(o, "max_flows", json_integer(d->max_flows));
	json_object_set_new(o, "idle_time_ns", json_integer((json_int_t)d->idle_ns));
	json_object_set_new(o, "now_ns", json_integer((json_int_t)d->now_ns));
	json_t *en = json_object();
	json_object_set_new(en, "state", json_string(!d->entry_valid ? "empty"
						     : d->entry_own ? "this_flow" : "other_flow"));
	if (d->entry_valid) {
		json_object_set_new(en, "hash", json_integer(d->entry_hash));
		json_object_set_new(en, "member", json_integer(d->held_slot));
		json_object_set_new(en, "last_seen_ns", json_integer((json_int_t)d->last_ns));
		json_object_set_new(en, "idle_ns", json_integer((json_int_t)elapsed(d)));
		json_object_set_new(en, "member_down", json_boolean(d->held_down));
	}
	entry_words(d, words, sizeof(words));
	json_object_set_new(en, "text", json_string(words));
	json_object_set_new(o, "entry", en);
	if (!per_packet(d) && d->why != RSW_ARS_WHY_NOT_MATCHED)
		json_object_set_new(o, "new_flowlet", json_boolean(d->new_flowlet));
	json_object_set_new(o, "samples", json_integer((json_int_t)d->samples));
	if (d->why >= RSW_ARS_WHY_BEST) {
		json_t *ms = json_array();
		for (unsigned k = 0; k < d->n_active && k < RSW_ARS_DECISION_MEMBERS; k++) {
			const struct rsw_ars_quality *q = &d->q[k];
			json_array_append_new(ms, json_pack(
				"{s:i, s:s, s:I, s:i, s:I, s:i, s:i}", "member", q->slot,
				"port", port_name(fib, q->port), "load_avg", (json_int_t)q->load_avg,
				"load_band", q->load_band, "queue_avg", (json_int_t)q->queue_avg,
				"queue_band", q->queue_band, "band", q->band));
		}
		json_object_set_new(o, "candidates", ms);
		json_object_set_new(o, "candidates_total", json_integer(d->n_active));
		if (d->why != RSW_ARS_WHY_RANDOM) {
			json_object_set_new(o, "best_band", json_integer(d->best_band));
			json_object_set_new(o, "tied", json_integer(d->n_tied));
		}
	}
	json_object_set_new(o, "member", json_integer(d->chosen_slot));
	json_object_set_new(o, "static_member", json_integer(e->u.ecmp.static_member));
	json_object_set_new(o, "reason", json_string(why_names[d->why]));
	why_words(d, g->ars, words, sizeof(words));
	json_object_set_new(o, "why", json_string(words));
	return o;
}
