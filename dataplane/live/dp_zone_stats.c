/* A zone's counters as one document: each switch's (the document of one switch, with its name),
 * each in-memory link's frames per direction, and what is still on the links. */
#include <string.h>

#include "dataplane/config/whole_file.h"
#include "dp_stats.h"
#include "dp_zone.h"

#define J(v) json_integer((json_int_t)(v))

static const char *end_name(const struct rsw_dp_zone *z, const struct rsw_topo_end *e,
			    char *buf, size_t len)
{
	const struct rsw_zone *m = z->model;
	if (e->sw == RSW_TOPO_HOST)
		return m->host[e->idx].name;
	snprintf(buf, len, "%s|%s", m->sw[e->sw].name, m->sw[e->sw].sw->state->ports[e->idx].name);
	return buf;
}

/* One direction of a link: frames and bytes put on it, and how many of the frames were PFC
 * (read while the workers run: relaxed, as every counter). */
static json_t *direction_json(const struct rsw_dp_link *d)
{
	return json_pack("{s:I, s:I, s:I}", "frames",
			 (json_int_t)__atomic_load_n(&d->frames, __ATOMIC_RELAXED), "bytes",
			 (json_int_t)__atomic_load_n(&d->bytes, __ATOMIC_RELAXED), "pfc_frames",
			 (json_int_t)__atomic_load_n(&d->pfc_frames, __ATOMIC_RELAXED));
}

static json_t *zone_json(const struct rsw_dp_zone *z, const struct rsw_dp_totals *t)
{
	json_t *root = json_object(), *sws = json_array(), *links = json_array();
	for (unsigned s = 0; s < z->n_sw; s++) {
		json_t *o = json_pack("{s:s}", "name", z->dp[s]->name);
		json_t *doc = rsw_dp_stats_json(z->dp[s], &t[s]);
		json_object_update(o, doc);
		json_decref(doc);
		json_array_append_new(sws, o);
	}
	for (unsigned i = 0; i + 1 < z->n_links; i += 2) {
		const struct rsw_topo_link *l = &z->model->link[z->link_of[i]];
		char a[128], b[128];
		json_array_append_new(links, json_pack(
			"{s:s, s:s, s:I, s:I, s:o, s:o}",
			"a", end_name(z, &l->a, a, sizeof(a)), "b", end_name(z, &l->b, b, sizeof(b)),
			"speed", (json_int_t)l->speed_mbps, "delay_ns", (json_int_t)l->delay_ns,
			"a_to_b", direction_json(&z->link[i]), "b_to_a", direction_json(&z->link[i + 1])));
	}
	json_t *workers = json_array();
	for (unsigned w = 0; w < z->n_workers; w++) {
		const struct rsw_dp_lcore *lc = &z->lc[w];
		json_t *ports = json_array();
		for (unsigned i = 0; i < lc->n_items; i++) {
			/* the ports it owns; with --rxq, "SWITCH|PORT:Q" for another port's RX queue */
			char n[128];
			int k = snprintf(n, sizeof(n), "%s|%s", lc->items[i].dp->name,
					 lc->items[i].dp->sw->state->ports[lc->items[i].port].name);
			if (!lc->items[i].tx)
				snprintf(n + k, sizeof(n) - (size_t)k, ":%u", lc->items[i].queue);
			json_array_append_new(ports, json_string(n));
		}
		json_array_append_new(workers, json_pack(
			"{s:I, s:I, s:o, s:I, s:I, s:I}", "worker", (json_int_t)w, "lcore",
			(json_int_t)lc->lcore, "ports", ports, "rounds",
			(json_int_t)__atomic_load_n(&lc->rounds, __ATOMIC_RELAXED), "sleeps",
			(json_int_t)__atomic_load_n(&lc->sleeps, __ATOMIC_RELAXED), "slept_us",
			(json_int_t)(__atomic_load_n(&lc->slept_ns, __ATOMIC_RELAXED) / 1000)));
	}
	json_object_set_new(root, "zone", json_string(z->name));
	json_object_set_new(root, "workers", workers);
	json_object_set_new(root, "switches", sws);
	json_object_set_new(root, "links", links);
	json_object_set_new(root, "in_flight", J(rsw_dp_zone_in_flight(z)));
	return root;
}

json_t *rsw_dp_zone_counters_json(const struct rsw_dp_zone *z)
{
	static struct rsw_dp_totals t[RSW_ZONE_MAX_SWITCHES];
	for (unsigned s = 0; s < z->n_sw; s++)
		rsw_dp_stats_sum(z->dp[s], &t[s], rsw_dp_queued(z->dp[s]));
	return zone_json(z, t);
}

int rsw_dp_zone_stats_write_json(const struct rsw_dp_zone *z, const struct rsw_dp_totals *t,
				 const char *path, char *err, size_t errlen)
{
	json_t *root = z->model ? zone_json(z, t) : rsw_dp_stats_json(z->dp[0], &t[0]);
	int rc = rsw_json_write_whole(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err,
				      errlen);
	json_decref(root);
	return rc;
}
