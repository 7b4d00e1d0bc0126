/* report.html's blocks for a zone at scale (report_scale.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "report_scale.h"
#include "json_get.h"

#define CDF_STEPS 1000 /* the CDF is evaluated at every 0.1 % of utilization */

/* A percentage to two decimals: what a cell or a readout shows, and all the page needs. */
static json_t *pct(double v)
{
	return json_real(round(v * 100) / 100);
}

/* Leaves and spines in the order of summary.json's switches, each name → its index. */
static void order_switches(const json_t *sum, const struct rsw_digest *d, json_t *leaves,
			   json_t *spines, json_t *at)
{
	size_t i, nl = 0, ns = 0;
	json_t *sw;
	json_array_foreach(json_object_get(sum, "switches"), i, sw) {
		const char *name = js(sw, "name");
		int leaf = json_object_get(d->leaf, name) != NULL;
		json_array_append_new(leaf ? leaves : spines, json_string(name));
		json_object_set_new(at, name, json_integer((json_int_t)(leaf ? nl++ : ns++)));
	}
}

static size_t idx(const json_t *at, const char *end)
{
	char node[128];
	rsw_digest_node(end, node, sizeof(node));
	json_t *v = json_object_get(at, node);
	return v ? (size_t)json_integer_value(v) : SIZE_MAX;
}

/* rows x cols cells: the largest utilization of the directions that fall in each (NAN: none),
 * how many do, how many carried a frame, and the sum for a mean. */
struct grid {
	size_t rows, cols;
	double *max, *sum;
	unsigned *n, *busy;
};

static int grid_new(struct grid *g, size_t rows, size_t cols)
{
	size_t c = rows * cols + 1;
	*g = (struct grid){rows, cols, malloc(c * sizeof(double)), calloc(c, sizeof(double)),
			   calloc(c, sizeof(unsigned)), calloc(c, sizeof(unsigned))};
	if (!g->max || !g->sum || !g->n || !g->busy)
		return -1;
	for (size_t i = 0; i < c; i++)
		g->max[i] = NAN;
	return 0;
}

static void grid_free(struct grid *g)
{
	free(g->max);
	free(g->sum);
	free(g->n);
	free(g->busy);
}

static void grid_add(struct grid *g, size_t r, size_t c, const struct rsw_link_dir *x)
{
	if (r >= g->rows || c >= g->cols)
		return;
	size_t k = r * g->cols + c;
	g->max[k] = isnan(g->max[k]) || x->util > g->max[k] ? x->util : g->max[k];
	g->sum[k] += x->util;
	g->n[k]++;
	g->busy[k] += x->frames > 0;
}

/* A heatmap block: values[row][col] in % (null: no link), and per cell the number of link
 * directions it sums up when any cell holds more than one. */
static json_t *heatmap(const char *id, const char *title, const char *xlabel, const char *ylabel,
		       json_t *rows, json_t *cols, const struct grid *g, const char *note)
{
	json_t *vals = json_array(), *count = json_array(), *busy = json_array();
	int several = 0;
	for (size_t r = 0; r < g->rows; r++) {
		json_t *v = json_array(), *n = json_array(), *b = json_array();
		for (size_t c = 0; c < g->cols; c++) {
			size_t k = r * g->cols + c;
			json_array_append_new(v, isnan(g->max[k]) ? json_null() : pct(g->max[k]));
			json_array_append_new(n, json_integer(g->n[k]));
			json_array_append_new(b, json_integer(g->busy[k]));
			several |= g->n[k] > 1;
		}
		json_array_append_new(vals, v);
		json_array_append_new(count, n);
		json_array_append_new(busy, b);
	}
	json_t *h = json_pack("{s:s, s:s, s:s, s:{s:s}, s:{s:s}, s:o, s:o, s:o, s:s}", "kind",
			      "heatmap", "id", id, "title", title, "x", "label", xlabel, "y",
			      "label", ylabel, "rows", rows, "cols", cols, "values", vals, "unit",
			      "%");
	if (several) {
		json_object_set_new(h, "count", count);
		json_object_set_new(h, "busy", busy);
	} else {
		json_decref(count);
		json_decref(busy);
	}
	if (note)
		json_object_set_new(h, "note", json_string(note));
	return h;
}

json_t *rsw_report_heatmaps(const json_t *sum, const struct rsw_digest *d)
{
	json_t *leaves = json_array(), *spines = json_array(), *at = json_object();
	json_t *out = json_array();
	order_switches(sum, d, leaves, spines, at);
	size_t nl = json_array_size(leaves), ns = json_array_size(spines);
	struct grid up, down, racks;
	if (grid_new(&up, ns, nl) < 0 || grid_new(&down, ns, nl) < 0 ||
	    grid_new(&racks, 2, nl) < 0)
		goto done;
	for (size_t i = 0; i < d->n_dir; i++) {
		const struct rsw_link_dir *x = &d->dir[i];
		switch (x->tier) {
		case RSW_LT_UP: grid_add(&up, idx(at, x->to), idx(at, x->from), x); break;
		case RSW_LT_DOWN: grid_add(&down, idx(at, x->from), idx(at, x->to), x); break;
		case RSW_LT_HOST_TX: grid_add(&racks, 0, idx(at, x->to), x); break;
		case RSW_LT_HOST_RX: grid_add(&racks, 1, idx(at, x->from), x); break;
		default: break;
		}
	}
	if (ns)
		json_array_append_new(out, heatmap("fabric-up", "Fabric, up: leaf → spine",
						   "leaf", "spine", json_incref(spines),
						   json_incref(leaves), &up, NULL));
	if (ns)
		json_array_append_new(out, heatmap("fabric-down", "Fabric, down: spine → leaf",
						   "leaf", "spine", json_incref(spines),
						   json_incref(leaves), &down, NULL));
	json_array_append_new(out, heatmap("racks", "Racks: host links per leaf (the busiest)",
					   "leaf", "direction",
					   json_pack("[s,s]", "host → leaf", "leaf → host"),
					   json_incref(leaves), &racks,
					   "Each cell is the busiest host link of the rack in that "
					   "direction; hover for how many of its links carried "
					   "frames."));
done:
	grid_free(&up);
	grid_free(&down);
	grid_free(&racks);
	json_decref(leaves);
	json_decref(spines);
	json_decref(at);
	return out;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

json_t *rsw_report_util_cdf(const struct rsw_digest *d)
{
	json_t *b = rsw_block_chart("xy", "util-cdf", "Link utilization per tier (CDF)",
				    "utilization", "%", "fraction of link directions", "");
	json_object_set_new(b, "step", json_true());
	json_object_set_new(b, "ymax", json_real(1));
	json_object_set_new(b, "xrange", json_pack("[f,f]", 0.0, 100.0));
	json_t *data = json_object_get(b, "data"), *x = json_array();
	json_array_append_new(data, x);
	for (unsigned k = 0; k <= CDF_STEPS; k++)
		json_array_append_new(x, json_real(k * 100.0 / CDF_STEPS));
	double *v = malloc((d->n_dir + 1) * sizeof(*v));
	for (unsigned t = 0; v && t < RSW_LT_N; t++) {
		size_t n = 0;
		for (size_t i = 0; i < d->n_dir; i++)
			if (d->dir[i].tier == t)
				v[n++] = d->dir[i].util;
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), cmp_double);
		json_array_append_new(json_object_get(b, "series"),
				      json_pack("{s:s, s:i}", "label", rsw_digest_tier_name(t), "n",
						(int)n));
		json_t *y = json_array();
		size_t at = 0;
		for (unsigned k = 0; k <= CDF_STEPS; k++) {
			double lim = k * 100.0 / CDF_STEPS;
			while (at < n && v[at] <= lim)
				at++;
			double frac = round((double)at / (double)n * 1e6) / 1e6;
			json_array_append_new(y, json_real(frac));
		}
		json_array_append_new(data, y);
	}
	free(v);
	json_object_set_new(b, "note", json_string("The fraction of each tier's link directions "
						   "at or below each utilization, evaluated every "
						   "0.1 %."));
	return b;
}

json_t *rsw_report_util_dist(const struct rsw_digest *d)
{
	json_t *rows = json_array();
	for (unsigned t = 0; t < RSW_LT_N; t++) {
		const struct rsw_tier_dist *x = &d->tier[t];
		if (!x->n)
			continue;
		json_array_append_new(rows, rsw_row("%s\t%zu\t%zu\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f"
						    "\t%.2f", rsw_digest_tier_name(t), x->n,
						    x->idle, x->min, x->p50, x->p90, x->p99,
						    x->max, x->mean));
	}
	return rsw_block_table("util-dist", json_pack("[s,s,s,s,s,s,s,s,s]", "tier",
						      "link directions", "idle", "min %", "p50 %",
						      "p90 %", "p99 %", "max %", "mean %"),
			       rows);
}

json_t *rsw_report_util_top(const struct rsw_digest *d, unsigned n)
{
	json_t *rows = json_array();
	for (size_t k = 0; k < d->n_dir && k < n; k++) {
		const struct rsw_link_dir *x = &d->dir[d->by_bytes[k]];
		json_array_append_new(rows, rsw_row("%s\t%s\t%s\t%.3f\t%llu\t%.2f\t%llu", x->from,
						    x->to, rsw_digest_tier_name(x->tier),
						    (double)x->bytes / 1e6,
						    (unsigned long long)x->frames, x->util,
						    (unsigned long long)x->pfc_tx));
	}
	json_t *t = rsw_block_table("util-top", json_pack("[s,s,s,s,s,s,s]", "from", "to", "tier",
							  "MB", "frames", "util %", "PFC sent"),
				    rows);
	json_object_set_new(t, "left", json_pack("[i,i,i]", 0, 1, 2));
	return t;
}

json_t *rsw_report_uplink_hist(const size_t *flows, size_t n)
{
	size_t top = 0;
	for (size_t i = 0; i < n; i++)
		top = flows[i] > top ? flows[i] : top;
	size_t *count = calloc(top + 1, sizeof(*count));
	json_t *b = rsw_block_chart("bars", "flows-uplink", "Uplinks by the number of flows they "
				    "carried", "flows on the uplink", "", "uplinks", "");
	json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "uplinks"));
	json_t *cats = json_array(), *d = json_array();
	for (size_t i = 0; count && i < n; i++)
		count[flows[i]]++;
	for (size_t k = 0; count && k <= top; k++) {
		char c[32];
		snprintf(c, sizeof(c), "%zu", k);
		json_array_append_new(cats, json_string(c));
		json_array_append_new(d, json_integer((json_int_t)count[k]));
	}
	free(count);
	json_object_set_new(b, "categories", cats);
	json_object_set_new(b, "histogram", json_true());
	json_array_append_new(json_object_get(b, "data"), d);
	return b;
}
