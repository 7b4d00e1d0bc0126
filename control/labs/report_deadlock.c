/* The report's PFC deadlocks (summary.json "deadlocks", docs/replay.md "PFC deadlock"): the first
 * one's cycle for the topology, drawn as numbered arrows from each member's switch to the switch
 * it waits on, and a section with every deadlock's members in order, when it formed, and the
 * flows caught in it. */
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "report_deadlock.h"

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long jint(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* The far end of "switch|port" over summary.json's links, or NULL. */
static const char *peer_of(json_t *sum, const char *end)
{
	json_t *l;
	size_t i;
	json_array_foreach(json_object_get(sum, "links"), i, l) {
		if (!strcmp(jstr(l, "a"), end))
			return jstr(l, "b");
		if (!strcmp(jstr(l, "b"), end))
			return jstr(l, "a");
	}
	return NULL;
}

json_t *rsw_report_deadlock_cycle(json_t *sum)
{
	json_t *d = json_array_get(json_object_get(sum, "deadlocks"), 0), *m;
	if (!d)
		return NULL;
	json_t *hops = json_array();
	size_t i;
	json_array_foreach(json_object_get(d, "cycle"), i, m) {
		char end[160], peer_sw[128];
		snprintf(end, sizeof(end), "%s|%s", jstr(m, "switch"), jstr(m, "port"));
		const char *peer = peer_of(sum, end);
		snprintf(peer_sw, sizeof(peer_sw), "%.*s", peer ? (int)strcspn(peer, "|") : 0,
			 peer ? peer : "");
		json_array_append_new(hops, json_pack("{s:I, s:s, s:s, s:s, s:s, s:I}", "order",
						      (json_int_t)(i + 1), "from", jstr(m, "switch"),
						      "to", peer_sw, "port", end, "peer",
						      peer ? peer : "", "priority",
						      (json_int_t)jint(m, "priority")));
	}
	return json_pack("{s:o, s:f}", "hops", hops, "formed_us", jint(d, "formed_ns") / 1e3);
}

json_t *rsw_report_deadlock_section(json_t *sum)
{
	json_t *all = json_object_get(sum, "deadlocks"), *d, *m, *f;
	if (!json_array_size(all))
		return NULL;
	char text[400];
	snprintf(text, sizeof(text),
		 "A cycle of paused queues, each waiting on the next and the last on the first, "
		 "held for %.0f µs (--deadlock-ns): the topology draws the first one's members as "
		 "numbered arrows, each from a queue's switch to the switch whose PG pauses it.",
		 jint(sum, "deadlock_hold_ns") / 1e3);
	json_t *sec = rsw_block_section("PFC deadlock", text);
	json_t *rows = json_array();
	size_t i, j;
	json_array_foreach(all, i, d) {
		json_t *br = json_object_get(d, "broken_ns");
		char members[1200] = "";
		size_t k = 0;
		json_array_foreach(json_object_get(d, "cycle"), j, m)
			k += (size_t)snprintf(members + k, k < sizeof(members) ? sizeof(members) - k : 0,
					      "%s%s|%s", j ? " → " : "", jstr(m, "switch"),
					      jstr(m, "port"));
		char broken[32];
		if (json_is_integer(br))
			snprintf(broken, sizeof(broken), "%.3f", json_integer_value(br) / 1e3);
		else
			snprintf(broken, sizeof(broken), "held to the end");
		json_array_append_new(rows, rsw_row("%zu\t%.3f\t%.3f\t%s\t%lld\t%s\t%zu", i + 1,
						    jint(d, "formed_ns") / 1e3,
						    jint(d, "found_ns") / 1e3, broken,
						    jint(json_array_get(json_object_get(d, "cycle"), 0),
							 "priority"),
						    members,
						    json_array_size(json_object_get(d, "flows"))));
		if (i == 49 && json_array_size(all) > 50)
			break; /* a watchdog breaking a cycle again and again: the first 50 */
	}
	json_t *t = rsw_block_table("deadlocks", json_pack("[s,s,s,s,s,s,s]", "#", "formed (µs)",
							   "found (µs)", "broken (µs)", "priority",
							   "cycle (each waits on the next)",
							   "flows"),
				    rows);
	if (json_array_size(all) > 50) {
		char note[80];
		snprintf(note, sizeof(note), "The first 50 of %zu deadlocks.", json_array_size(all));
		json_object_set_new(t, "note", json_string(note));
	}
	rsw_block_add(sec, t);
	json_t *fr = json_array();
	d = json_array_get(all, 0);
	json_array_foreach(json_object_get(d, "flows"), i, f)
		json_array_append_new(fr, rsw_row("%s→%s QP %lld\t%lld\t%lld", jstr(f, "src"),
						  jstr(f, "dst"), jint(f, "dest_qp"), jint(f, "sport"),
						  jint(f, "frames")));
	json_t *ft = rsw_block_table("deadlock-flows", json_pack("[s,s,s]", "flow", "UDP source port",
								 "frames caught"), fr);
	json_object_set_new(ft, "heading", json_string("Flows caught in the first deadlock"));
	rsw_block_add(sec, ft);
	return sec;
}
