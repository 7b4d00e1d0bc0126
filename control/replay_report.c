#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "html.h"
#include "replay_report.h"

#define COLS 600          /* plot width in px; series are reduced to one max per column */
#define PLOT_H 160
#define TOP_QUEUES 6
#define MAX_PFC_ROWS 48
#define MAX_SPANS 4096

static const char *const colors[TOP_QUEUES] = {"#4a7ab5", "#c0392b", "#27ae60", "#8e44ad",
					       "#d35400", "#16a085"};

struct queue_series {
	char key[160];   /* "[switch|]port" */
	unsigned queue;
	uint64_t max;
	uint64_t col[COLS];
};

struct pfc_row {
	char key[160];
	uint64_t on_since;  /* XOFF in force since, or UINT64_MAX */
	size_t n;
	uint64_t span[MAX_SPANS][2];
	uint64_t frames;
};

struct report {
	json_t *sum;
	int zone;
	uint64_t t0, t1;
	struct queue_series q[TOP_QUEUES];
	unsigned n_q;
	struct pfc_row *rows;
	unsigned n_rows;
	FILE *out;
};

static uint64_t ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* Calls fn for every port object of the summary with its "[switch|]port" label. */
static void each_port(struct report *rp, void (*fn)(struct report *, const char *, json_t *))
{
	char key[160];
	json_t *sw, *port;
	size_t i, j;
	if (!rp->zone) {
		json_array_foreach(json_object_get(rp->sum, "ports"), j, port)
			fn(rp, js(port, "name"), port);
		return;
	}
	json_array_foreach(json_object_get(rp->sum, "switches"), i, sw)
		json_array_foreach(json_object_get(sw, "ports"), j, port) {
			snprintf(key, sizeof(key), "%s|%s", js(sw, "name"), js(port, "name"));
			fn(rp, key, port);
		}
}

/* Keeps the TOP_QUEUES deepest queues. */
static void pick_queues(struct report *rp, const char *key, json_t *port)
{
	size_t i;
	json_t *q;
	json_array_foreach(json_object_get(port, "queues"), i, q) {
		uint64_t d = ju(q, "max_depth_bytes");
		if (!d)
			continue;
		unsigned slot = rp->n_q < TOP_QUEUES ? rp->n_q++ : TOP_QUEUES;
		if (slot == TOP_QUEUES) {
			unsigned min = 0;
			for (unsigned k = 1; k < TOP_QUEUES; k++)
				if (rp->q[k].max < rp->q[min].max)
					min = k;
			if (rp->q[min].max >= d)
				continue;
			slot = min;
		}
		memset(&rp->q[slot], 0, sizeof(rp->q[slot]));
		snprintf(rp->q[slot].key, sizeof(rp->q[slot].key), "%s", key);
		rp->q[slot].queue = (unsigned)ju(q, "queue");
		rp->q[slot].max = d;
	}
}

static unsigned col_of(const struct report *rp, uint64_t t)
{
	if (t <= rp->t0 || rp->t1 <= rp->t0)
		return 0;
	uint64_t c = (t - rp->t0) * (COLS - 1) / (rp->t1 - rp->t0);
	return c >= COLS ? COLS - 1 : (unsigned)c;
}

static struct pfc_row *row(struct report *rp, const char *key)
{
	for (unsigned i = 0; i < rp->n_rows; i++)
		if (!strcmp(rp->rows[i].key, key))
			return &rp->rows[i];
	if (rp->n_rows == MAX_PFC_ROWS)
		return NULL;
	struct pfc_row *r = &rp->rows[rp->n_rows++];
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->on_since = UINT64_MAX;
	return r;
}

static void event(struct report *rp, json_t *e)
{
	const char *kind = js(e, "event");
	char key[160];
	if (json_object_get(e, "switch"))
		snprintf(key, sizeof(key), "%s|%s", js(e, "switch"), js(e, "port"));
	else
		snprintf(key, sizeof(key), "%s", js(e, "port"));
	uint64_t t = ju(e, "t");
	if (!strcmp(kind, "queue_depth")) {
		unsigned q = (unsigned)ju(e, "queue");
		for (unsigned i = 0; i < rp->n_q; i++)
			if (rp->q[i].queue == q && !strcmp(rp->q[i].key, key)) {
				uint64_t b = ju(e, "bytes");
				unsigned c = col_of(rp, t);
				if (b > rp->q[i].col[c])
					rp->q[i].col[c] = b;
			}
	} else if (!strcmp(kind, "pfc_tx")) {
		struct pfc_row *r = row(rp, key);
		if (!r)
			return;
		int xoff = 0;
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(e, "time"), i, v)
			xoff |= json_integer_value(v) > 0;
		r->frames++;
		if (xoff && r->on_since == UINT64_MAX) {
			r->on_since = t;
		} else if (!xoff && r->on_since != UINT64_MAX) {
			if (r->n < MAX_SPANS) {
				r->span[r->n][0] = r->on_since;
				r->span[r->n][1] = t;
				r->n++;
			}
			r->on_since = UINT64_MAX;
		}
	}
}

static int read_events(struct report *rp, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot read", path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *e = json_loads(line, 0, NULL);
		if (e)
			event(rp, e);
		json_decref(e);
	}
	free(line);
	fclose(f);
	return 0;
}

static double x_of(const struct report *rp, uint64_t t)
{
	return 50.0 + (double)col_of(rp, t);
}

static void time_axis(FILE *f, const struct report *rp, unsigned y)
{
	fprintf(f, "<line class=\"axis\" x1=\"50\" y1=\"%u\" x2=\"%u\" y2=\"%u\"/>\n", y, 50 + COLS, y);
	for (unsigned k = 0; k <= 4; k++) {
		uint64_t t = rp->t0 + (rp->t1 - rp->t0) * k / 4;
		fprintf(f, "<text x=\"%.0f\" y=\"%u\">%.3f us</text>\n", 50 + (double)COLS * k / 4 - 15,
			y + 12, (double)(t - rp->t0) / 1e3);
	}
}

static void queue_plot(FILE *f, const struct report *rp)
{
	fprintf(f, "<h2>Queue depth over time (the %u deepest queues)</h2>\n", rp->n_q);
	if (!rp->n_q) {
		fprintf(f, "<p>No queue held a packet.</p>\n");
		return;
	}
	uint64_t max = 1;
	for (unsigned i = 0; i < rp->n_q; i++)
		max = rp->q[i].max > max ? rp->q[i].max : max;
	fprintf(f, "<svg width=\"%u\" height=\"%u\" role=\"img\" id=\"queue-depth\">\n", COLS + 70,
		PLOT_H + 30);
	fprintf(f, "<text x=\"0\" y=\"10\">%lu B</text>\n", (unsigned long)max);
	for (unsigned i = 0; i < rp->n_q; i++) {
		fprintf(f, "<polyline class=\"line\" stroke=\"%s\" data-queue=\"%s:%u\" points=\"",
			colors[i], rp->q[i].key, rp->q[i].queue);
		for (unsigned c = 0; c < COLS; c++)
			fprintf(f, "%u,%.1f ", 50 + c,
				PLOT_H - (double)rp->q[i].col[c] / (double)max * (PLOT_H - 10));
		fprintf(f, "\"/>\n");
	}
	time_axis(f, rp, PLOT_H);
	fprintf(f, "</svg>\n<table><tr><th>line</th><th>port</th><th>queue</th><th>max depth (B)"
		   "</th></tr>\n");
	for (unsigned i = 0; i < rp->n_q; i++) {
		fprintf(f, "<tr><td style=\"color:%s\">&#9644;</td><td>", colors[i]);
		rsw_html_esc(f, rp->q[i].key);
		fprintf(f, "</td><td>%u</td><td>%lu</td></tr>\n", rp->q[i].queue,
			(unsigned long)rp->q[i].max);
	}
	fprintf(f, "</table>\n");
}

static void util_bar(FILE *f, const char *label, double u)
{
	fprintf(f, "<tr><td style=\"text-align:left\">");
	rsw_html_esc(f, label);
	fprintf(f, "</td><td><svg width=\"404\" height=\"12\"><rect class=\"bar\" x=\"0\" y=\"1\" "
		   "width=\"%.1f\" height=\"10\"/></svg></td><td>%.1f %%</td></tr>\n",
		u > 1 ? 400 : u * 400, u * 100);
}

static void single_port_util(struct report *rp, const char *key, json_t *port)
{
	double span = (double)(rp->t1 - rp->t0), speed = (double)ju(port, "speed");
	if (speed > 0 && span > 0) {
		double bits = (double)(ju(port, "tx_bytes") + ju(port, "tx_packets") * 24) * 8;
		util_bar(rp->out, key, bits / (span * speed / 1e3));
	}
}

static void utilization(FILE *f, struct report *rp)
{
	fprintf(f, "<h2>Link utilization (transmitted, over the whole run)</h2>\n<table>\n");
	if (rp->zone) {
		size_t i, d;
		json_t *l, *dir;
		json_array_foreach(json_object_get(rp->sum, "links"), i, l)
			json_array_foreach(json_object_get(l, "directions"), d, dir) {
				char label[400];
				snprintf(label, sizeof(label), "%s → %s", js(dir, "from"), js(dir, "to"));
				util_bar(f, label, json_real_value(json_object_get(dir, "utilization")));
			}
	} else {
		each_port(rp, single_port_util);
	}
	fprintf(f, "</table>\n");
}

static void pfc_timeline(FILE *f, const struct report *rp)
{
	fprintf(f, "<h2>PFC pause timeline (XOFF in force, by the port that sent it)</h2>\n");
	if (!rp->n_rows) {
		fprintf(f, "<p>No PFC frame was sent.</p>\n");
		return;
	}
	unsigned h = rp->n_rows * 16 + 20;
	fprintf(f, "<svg width=\"%u\" height=\"%u\" role=\"img\" id=\"pfc-timeline\">\n", COLS + 230,
		h);
	for (unsigned i = 0; i < rp->n_rows; i++) {
		const struct pfc_row *r = &rp->rows[i];
		unsigned y = i * 16;
		fprintf(f, "<text x=\"%u\" y=\"%u\">", COLS + 60, y + 10);
		rsw_html_esc(f, r->key);
		fprintf(f, " (%lu frames)</text>\n", (unsigned long)r->frames);
		for (size_t k = 0; k <= r->n; k++) {
			uint64_t a, b;
			if (k < r->n) {
				a = r->span[k][0];
				b = r->span[k][1];
			} else if (r->on_since != UINT64_MAX) {
				a = r->on_since;
				b = rp->t1;
			} else {
				continue;
			}
			double x0 = x_of(rp, a), x1 = x_of(rp, b);
			fprintf(f, "<rect class=\"xoff\" x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"12\">"
				   "<title>%.3f-%.3f us</title></rect>\n", x0, y, x1 - x0 < 1 ? 1 : x1 - x0,
				(double)(a - rp->t0) / 1e3, (double)(b - rp->t0) / 1e3);
		}
	}
	time_axis(f, rp, h - 18);
	fprintf(f, "</svg>\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void completion(FILE *f, const struct report *rp)
{
	json_t *flows = json_object_get(rp->sum, "flows"), *fl;
	size_t n = json_array_size(flows), k = 0, i;
	fprintf(f, "<h2>Flow completion times</h2>\n");
	uint64_t *c = calloc(n ? n : 1, sizeof(*c));
	if (!c)
		return;
	json_array_foreach(flows, i, fl)
		if (json_is_integer(json_object_get(fl, "completion_ns")))
			c[k++] = ju(fl, "completion_ns");
	if (!k) {
		fprintf(f, "<p>No flow completed.</p>\n");
		free(c);
		return;
	}
	qsort(c, k, sizeof(*c), cmp_u64);
	fprintf(f, "<p>%zu of %zu flows completed: median %.3f us, p99 %.3f us, max %.3f us.</p>\n",
		k, n, (double)c[k / 2] / 1e3, (double)c[(k * 99) / 100 < k ? (k * 99) / 100 : k - 1] / 1e3,
		(double)c[k - 1] / 1e3);
	fprintf(f, "<svg width=\"%u\" height=\"%u\" role=\"img\" id=\"fct-cdf\">\n<polyline "
		   "class=\"line\" stroke=\"#4a7ab5\" points=\"", COLS + 70, PLOT_H + 30);
	size_t step = k > COLS ? k / COLS : 1;
	for (size_t j = 0; j < k; j += step)
		fprintf(f, "%.1f,%.1f ", 50 + (double)c[j] / (double)c[k - 1] * (COLS - 1),
			PLOT_H - (double)(j + 1) / (double)k * (PLOT_H - 10));
	fprintf(f, "%.1f,%.1f\"/>\n", 50.0 + COLS - 1, 10.0);
	fprintf(f, "<line class=\"axis\" x1=\"50\" y1=\"%u\" x2=\"%u\" y2=\"%u\"/>\n<text x=\"0\" "
		   "y=\"14\">100 %%</text><text x=\"50\" y=\"%u\">0</text><text x=\"%u\" y=\"%u\">"
		   "%.3f us</text>\n</svg>\n", PLOT_H, 50 + COLS, PLOT_H, PLOT_H + 12, COLS, PLOT_H + 12,
		(double)c[k - 1] / 1e3);
	free(c);
}

static void header(FILE *f, const struct report *rp)
{
	json_t *cons = json_object_get(rp->sum, "conservation"), *drops;
	const char *name = rp->zone ? js(rp->sum, "zone") : "one switch";
	fprintf(f, "<h1>rocesw replay: ");
	rsw_html_esc(f, name);
	fprintf(f, "</h1>\n<table>\n<tr><td style=\"text-align:left\">virtual time</td><td>%.3f us "
		   "to %.3f us</td></tr>\n", (double)rp->t0 / 1e3, (double)rp->t1 / 1e3);
	json_t *coll = json_object_get(rp->sum, "collective_ns");
	if (json_is_integer(coll))
		fprintf(f, "<tr><td style=\"text-align:left\">all flows done in</td><td>%.3f us</td>"
			   "</tr>\n", (double)json_integer_value(coll) / 1e3);
	const char *k;
	json_t *v;
	drops = json_object_get(rp->sum, "drops");
	json_object_foreach(drops, k, v) {
		fprintf(f, "<tr><td style=\"text-align:left\">dropped: ");
		rsw_html_esc(f, k);
		fprintf(f, "</td><td>%lu</td></tr>\n", (unsigned long)json_integer_value(v));
	}
	fprintf(f, "<tr><td style=\"text-align:left\">conservation</td><td>%s</td></tr>\n</table>\n",
		json_is_true(json_object_get(cons, "holds")) ? "holds" : "DOES NOT HOLD");
}

int rsw_replay_report(const char *dir, const char *path, char *err, size_t errlen)
{
	char p[4096];
	json_error_t je;
	struct report rp = {0};
	snprintf(p, sizeof(p), "%s/summary.json", dir);
	rp.sum = json_load_file(p, 0, &je);
	if (!rp.sum) {
		snprintf(err, errlen, "%s:%d: %s", p, je.line, je.text);
		return -1;
	}
	rp.rows = calloc(MAX_PFC_ROWS, sizeof(*rp.rows));
	if (!rp.rows) {
		json_decref(rp.sum);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rp.zone = json_object_get(rp.sum, "switches") != NULL;
	rp.t0 = ju(rp.sum, "start_ns");
	rp.t1 = ju(rp.sum, "end_ns");
	each_port(&rp, pick_queues);
	snprintf(p, sizeof(p), "%s/events.jsonl", dir);
	int rc = read_events(&rp, p, err, errlen);
	FILE *f = rc == 0 ? fopen(path, "w") : NULL;
	if (rc == 0 && !f) {
		snprintf(err, errlen, "%s: cannot write", path);
		rc = -1;
	}
	if (f) {
		rp.out = f;
		rsw_html_begin(f, "rocesw replay");
		header(f, &rp);
		queue_plot(f, &rp);
		utilization(f, &rp);
		pfc_timeline(f, &rp);
		completion(f, &rp);
		fprintf(f, "</body></html>\n");
		if (fclose(f) != 0) {
			snprintf(err, errlen, "%s: cannot write", path);
			rc = -1;
		}
	}
	free(rp.rows);
	json_decref(rp.sum);
	return rc;
}
