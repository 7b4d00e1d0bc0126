#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "replay_report.h"
#include "report_compare.h"

/* The largest value of a chart's series (data[1..]). */
static double data_max(const json_t *block)
{
	double m = 0;
	size_t i, j;
	json_t *s, *x;
	json_array_foreach(json_object_get(block, "data"), i, s)
		if (i)
			json_array_foreach(s, j, x)
				m = fmax(m, json_number_value(x));
	return m;
}

static double first_x(const json_t *b)
{
	return json_number_value(json_array_get(json_array_get(json_object_get(b, "data"), 0), 0));
}

static double last_x(const json_t *b)
{
	json_t *x = json_array_get(json_object_get(b, "data"), 0);
	return json_number_value(json_array_get(x, json_array_size(x) - 1));
}

/* One grid of the runs' copies of a block, titled by run, on shared ranges. */
static json_t *grid(json_t *const *views, const char *const *names, unsigned n, const char *key,
		    int share_x)
{
	json_t *g = json_pack("{s:s, s:[]}", "kind", "grid", "blocks");
	double ymax = 0, x0 = INFINITY, x1 = -INFINITY;
	for (unsigned i = 0; i < n; i++) {
		json_t *b = json_object_get(views[i], key);
		if (!b)
			continue;
		ymax = fmax(ymax, data_max(b));
		if (json_array_size(json_object_get(b, "xrange")) == 2) {
			x0 = fmin(x0, json_number_value(json_array_get(json_object_get(b, "xrange"), 0)));
			x1 = fmax(x1, json_number_value(json_array_get(json_object_get(b, "xrange"), 1)));
		} else if (json_array_size(json_array_get(json_object_get(b, "data"), 0))) {
			x0 = fmin(x0, first_x(b));
			x1 = fmax(x1, last_x(b));
		}
	}
	for (unsigned i = 0; i < n; i++) {
		json_t *b = json_object_get(views[i], key);
		if (!b)
			continue;
		b = json_deep_copy(b);
		char id[300];
		snprintf(id, sizeof(id), "%s-%u", json_string_value(json_object_get(b, "id")), i);
		json_object_set_new(b, "id", json_string(id));
		json_object_set_new(b, "run", json_string(names[i]));
		json_object_set_new(b, "heading", json_string(names[i]));
		json_object_set_new(b, "half", json_true());
		if (!json_object_get(b, "ymax") && ymax > 0)
			json_object_set_new(b, "ymax", json_real(ymax * 1.05));
		if (share_x && x1 > x0)
			json_object_set_new(b, "xrange", json_pack("[f,f]", x0, x1));
		rsw_block_add(g, b);
	}
	return g;
}

static int cmp_double(const void *a, const void *c)
{
	double p = *(const double *)a, q = *(const double *)c;
	return p < q ? -1 : p > q;
}

/* Every run's flow-completion CDF on one chart: the union of their x values, each run's step
 * function (the fraction of its flows done by x) at each. */
static json_t *fct_overlay(json_t *const *views, const char *const *names, unsigned n)
{
	json_t *b = rsw_block_chart("xy", "fct-cdf", "Flow completion times (CDF), all runs",
				    "completion time", "µs", "fraction of flows", "");
	json_object_set_new(b, "step", json_true());
	json_object_set_new(b, "ymax", json_real(1));
	size_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += json_array_size(json_array_get(json_object_get(json_object_get(views[i], "fct"),
									"data"), 0));
	double *xs = malloc((total ? total : 1) * sizeof(*xs));
	if (!xs)
		return b;
	size_t k = 0, j;
	json_t *x;
	for (unsigned i = 0; i < n; i++)
		json_array_foreach(json_array_get(json_object_get(json_object_get(views[i], "fct"),
								  "data"), 0), j, x)
			xs[k++] = json_number_value(x);
	qsort(xs, k, sizeof(*xs), cmp_double);
	json_t *data = json_object_get(b, "data"), *ux = json_array();
	for (size_t m = 0; m < k; m++)
		if (!m || xs[m] != xs[m - 1])
			json_array_append_new(ux, json_real(xs[m]));
	json_array_append_new(data, ux);
	for (unsigned i = 0; i < n; i++) {
		json_t *d = json_object_get(json_object_get(views[i], "fct"), "data");
		json_t *rx = json_array_get(d, 0), *ry = json_array_get(d, 1), *col = json_array();
		size_t p = 0, np = json_array_size(rx);
		json_array_foreach(ux, j, x) {
			while (p < np && json_number_value(json_array_get(rx, p)) <= json_number_value(x))
				p++;
			json_array_append_new(col, p ? json_real(json_number_value(json_array_get(ry, p - 1)))
						     : json_null());
		}
		json_array_append_new(data, col);
		json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", names[i]));
	}
	free(xs);
	return b;
}

/* The overview as one table: a row per figure (the union over runs, in first-seen order), a
 * column per run. */
static json_t *overview(json_t *const *views, const char *const *names, unsigned n)
{
	json_t *head = json_array(), *keys = json_array(), *rows = json_array();
	json_array_append_new(head, json_string(""));
	for (unsigned i = 0; i < n; i++) {
		json_array_append_new(head, json_string(names[i]));
		size_t j, m;
		json_t *r, *k;
		json_array_foreach(json_object_get(views[i], "overview"), j, r) {
			const char *name = json_string_value(json_array_get(r, 0));
			int seen = 0;
			json_array_foreach(keys, m, k)
				seen |= !strcmp(json_string_value(k), name);
			if (!seen)
				json_array_append_new(keys, json_string(name));
		}
	}
	size_t j, m;
	json_t *k, *r;
	json_array_foreach(keys, j, k) {
		json_t *row = json_array();
		json_array_append(row, k);
		for (unsigned i = 0; i < n; i++) {
			json_t *val = json_string("–");
			json_array_foreach(json_object_get(views[i], "overview"), m, r)
				if (!strcmp(json_string_value(json_array_get(r, 0)), json_string_value(k))) {
					json_decref(val);
					val = json_incref(json_array_get(r, 1));
				}
			json_array_append_new(row, val);
		}
		json_array_append_new(rows, row);
	}
	json_decref(keys);
	return rsw_block_table("overview", head, rows);
}

/* The runs' utilization bars by tier: the tiers of the first run, one chart per run each. */
static json_t *util_section(json_t *const *views, const char *const *names, unsigned n)
{
	json_t *s = rsw_block_section("Link utilization by tier", "Wire bits over each run's "
				      "window; every chart's y axis runs 0–100 %.");
	size_t t;
	json_t *b;
	json_array_foreach(json_object_get(views[0], "util"), t, b) {
		const char *id = json_string_value(json_object_get(b, "id"));
		json_t *g = json_pack("{s:s, s:[]}", "kind", "grid", "blocks");
		for (unsigned i = 0; i < n; i++) {
			size_t u;
			json_t *c;
			json_array_foreach(json_object_get(views[i], "util"), u, c)
				if (!strcmp(json_string_value(json_object_get(c, "id")), id)) {
					c = json_deep_copy(c);
					char nid[300], title[400];
					snprintf(nid, sizeof(nid), "%s-%u", id, i);
					snprintf(title, sizeof(title), "%s: %s", names[i],
						 json_string_value(json_object_get(c, "title")));
					json_object_set_new(c, "id", json_string(nid));
					json_object_set_new(c, "title", json_string(title));
					json_object_set_new(c, "run", json_string(names[i]));
					json_object_set_new(c, "half", json_true());
					rsw_block_add(g, c);
				}
		}
		rsw_block_add(s, g);
	}
	return s;
}

static json_t *section(const char *title, const char *text, json_t *child)
{
	json_t *s = rsw_block_section(title, text);
	rsw_block_add(s, child);
	return s;
}

int rsw_report_compare(const char *const *dirs, const char *const *names, unsigned n,
		       const char *path, char *err, size_t errlen)
{
	json_t **views = calloc(n, sizeof(*views));
	int rc = -1;
	if (!views) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	unsigned got = 0;
	for (; got < n; got++)
		if (!(views[got] = rsw_replay_view(dirs[got], err, errlen)))
			goto out;
	json_t *page = json_pack("{s:s, s:s, s:[]}", "title", "rocesw replay: compare", "subtitle",
				 "Each kind of chart is drawn for every run on the same axes: the same "
				 "time range and the same y maximum.", "blocks");
	rsw_block_add(page, overview(views, names, n));
	if (json_object_get(views[0], "topology"))
		rsw_block_add(page, section("Topology", "Links coloured by the utilization of their "
					    "busier direction.", grid(views, names, n, "topology", 0)));
	rsw_block_add(page, section("Flow completion", NULL, fct_overlay(views, names, n)));
	rsw_block_add(page, section("Queue depth", NULL, grid(views, names, n, "queue", 1)));
	rsw_block_add(page, util_section(views, names, n));
	if (json_object_get(views[0], "flows_uplink"))
		rsw_block_add(page, section("Flows per uplink", "Which flows each leaf → spine "
					    "uplink carried, every run on the same y axis.",
					    grid(views, names, n, "flows_uplink", 0)));
	rsw_block_add(page, section("PFC pauses", NULL, grid(views, names, n, "pfc", 1)));
	rsw_block_add(page, section("ECN marks", NULL, grid(views, names, n, "ecn", 1)));
	int closed = 0;
	for (unsigned i = 0; i < n; i++)
		closed |= json_object_get(views[i], "closed_loop") != NULL;
	if (closed) {
		json_t *s = rsw_block_section("Closed-loop collectives", NULL);
		for (unsigned i = 0; i < n; i++) {
			json_t *c = json_object_get(views[i], "closed_loop");
			if (!c)
				continue;
			json_t *g = json_deep_copy(c);
			json_object_set_new(g, "title", json_string(names[i]));
			size_t j;
			json_t *b;
			json_array_foreach(json_object_get(g, "blocks"), j, b) {
				char id[300];
				snprintf(id, sizeof(id), "%s-%u", json_string_value(json_object_get(b, "id")), i);
				json_object_set_new(b, "id", json_string(id));
			}
			rsw_block_add(s, g);
		}
		rsw_block_add(page, s);
	}
	rc = rsw_page_write(path, page);
	if (rc < 0)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	json_decref(page);
out:
	for (unsigned i = 0; i < got; i++)
		json_decref(views[i]);
	free(views);
	return rc;
}
