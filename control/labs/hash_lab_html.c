/* The hash lab's page for one group: the policies' figures, what a --fail and a --seed-sweep
 * showed, and a bar chart of bytes per member for each policy on one shared y scale. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hash_lab_html.h"
#include "html.h"

static double bars_max(json_t *blocks)
{
	double m = 0;
	size_t i, j, k;
	json_t *b, *s, *x;
	json_array_foreach(blocks, i, b) {
		if (json_object_get(b, "blocks"))
			m = fmax(m, bars_max(json_object_get(b, "blocks")));
		if (!strcmp(json_string_value(json_object_get(b, "kind")) ?: "", "bars"))
			json_array_foreach(json_object_get(b, "data"), j, s)
				json_array_foreach(s, k, x)
					m = fmax(m, json_number_value(x));
	}
	return m;
}

static void set_ymax(json_t *blocks, double y)
{
	size_t i;
	json_t *b;
	json_array_foreach(blocks, i, b) {
		if (json_object_get(b, "blocks"))
			set_ymax(json_object_get(b, "blocks"), y);
		if (!strcmp(json_string_value(json_object_get(b, "kind")) ?: "", "bars"))
			json_object_set_new(b, "ymax", json_real(y));
	}
}

void rsw_lab_share_y(json_t *blocks)
{
	double m = bars_max(blocks);
	set_ymax(blocks, m > 0 ? m * 1.05 : 1);
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* "Member failure": what each policy moved when the failing members left. */
static void add_fail_section(json_t *page, const json_t *doc, json_t *fail_rows)
{
	size_t m;
	char t[256] = "Failing members:";
	json_t *x;
	json_array_foreach(json_object_get(doc, "fail_members"), m, x)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), " %lld", json_integer_value(x));
	json_t *s = rsw_block_section("Member failure", t);
	rsw_block_add(s, rsw_block_table("fail", json_pack("[s,s,s,s,s,s]", "policy",
		"flows on failed members", "moved (resilient)", "moved (modulo)",
		"max/mean after (resilient)", "max/mean after (modulo)"), fail_rows));
	rsw_block_add(page, s);
}

static void add_sweep_section(json_t *page, json_t *sweep_rows)
{
	json_t *s = rsw_block_section("Seed sweep", "max/mean of each policy with every hash seed "
				      "tried in place of its own.");
	rsw_block_add(s, rsw_block_table("seed-sweep", json_pack("[s,s,s,s]", "policy", "best",
				"worst", "what the sweep shows"), sweep_rows));
	rsw_block_add(page, s);
}

/* "Bytes per member": a chart per policy. */
static json_t *member_charts(const json_t *pols)
{
	size_t i, m;
	json_t *p;
	json_t *charts = rsw_block_section("Bytes per member", "Every policy's chart has the same "
					   "y axis.");
	json_array_foreach(pols, i, p) {
		char id[32];
		snprintf(id, sizeof(id), "policy-%zu", i);
		json_t *b = rsw_block_chart("bars", id, json_string_value(json_object_get(p, "name")),
					    "member", "", "bytes", "B");
		json_t *cats = json_array(), *d = json_array(), *x;
		json_array_foreach(json_object_get(p, "members"), m, x) {
			char c[32];
			snprintf(c, sizeof(c), "%lld", json_integer_value(json_object_get(x, "member")));
			json_array_append_new(cats, json_string(c));
			json_array_append(d, json_object_get(x, "bytes"));
		}
		json_object_set_new(b, "categories", cats);
		json_object_set_new(b, "policy", json_string(json_string_value(json_object_get(p, "name"))));
		json_object_set_new(b, "half", json_true());
		json_array_append_new(json_object_get(b, "data"), d);
		json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "bytes"));
		rsw_block_add(charts, b);
	}
	return charts;
}

/* The page's blocks in the order they appear: the policies' table, member failure, seed sweep,
 * bytes per member. */
int rsw_lab_write_html(const char *path, const json_t *doc)
{
	json_t *tr = json_object_get(doc, "traffic"), *pols = json_object_get(doc, "policies");
	char sub[256];
	snprintf(sub, sizeof(sub), "%lld packets, %lld flows, %lld members",
		 json_integer_value(json_object_get(tr, "packets")),
		 json_integer_value(json_object_get(tr, "flows")),
		 json_integer_value(json_object_get(doc, "members")));
	json_t *page = json_pack("{s:s, s:s, s:[]}", "title", "rocesw hash lab", "subtitle", sub,
				 "blocks");
	json_t *rows = json_array(), *fail_rows = json_array(), *sweep_rows = json_array(), *p;
	size_t i;
	json_array_foreach(pols, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		json_array_append_new(rows, rsw_row("%s\t%s\t%.2f\t%.3f\t%lld of %lld", name,
						    json_string_value(json_object_get(p, "algorithm")),
						    num(p, "max_mean"), num(p, "jain"),
						    json_integer_value(json_object_get(p, "fat_flows_colliding")),
						    json_integer_value(json_object_get(p, "fat_flows"))));
		json_t *f = json_object_get(p, "fail"), *w = json_object_get(p, "seed_sweep");
		if (f)
			json_array_append_new(fail_rows, rsw_row("%s\t%lld\t%lld\t%lld\t%.2f\t%.2f", name,
				json_integer_value(json_object_get(f, "own_flows")),
				json_integer_value(json_object_get(f, "moved_resilient")),
				json_integer_value(json_object_get(f, "moved_modulo")),
				num(f, "max_mean_after_resilient"), num(f, "max_mean_after_modulo")));
		if (w)
			json_array_append_new(sweep_rows, rsw_row("%s\t%.2f (seed %lld)\t%.2f (seed %lld)\t%s",
				name, num(w, "best_max_mean"), json_integer_value(json_object_get(w, "best_seed")),
				num(w, "worst_max_mean"), json_integer_value(json_object_get(w, "worst_seed")),
				json_string_value(json_object_get(w, "note")) ?: "seeds differ"));
	}
	rsw_block_add(page, rsw_block_table("policies", json_pack("[s,s,s,s,s]", "policy", "algorithm",
						"max/mean", "Jain", "largest flows sharing a member"), rows));
	if (json_array_size(fail_rows))
		add_fail_section(page, doc, fail_rows);
	else
		json_decref(fail_rows);
	if (json_array_size(sweep_rows))
		add_sweep_section(page, sweep_rows);
	else
		json_decref(sweep_rows);
	rsw_block_add(page, member_charts(pols));
	rsw_lab_share_y(json_object_get(page, "blocks"));
	int rc = rsw_page_write(path, page);
	json_decref(page);
	return rc;
}
