/* The blocks of a replay's page, built from its summary.json and events.jsonl; report.html lays
 * them out for one run, `rocesw report compare` side by side for several (report_compare.c). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "replay_digest.h"
#include "replay_report.h"
#include "replay_summary.h"
#include "report_deadlock.h"
#include "report_scale.h"
#include "json_get.h"

#define TOP_QUEUES 6
#define MAX_POINTS 20000 /* samples per series handed to the chart; more are bucketed (max) */
#define ECN_BINS 100
#define MAX_PFC_ROWS 64
#define ECN_SERIES 8   /* switches with their own ECN series; the rest are summed */
#define TOP_LINKS 20   /* rows of the top-N link table at scale */
#define COLLIDED_ROWS 20 /* rows of the shared-uplink table */

struct queue_pick {
	char key[160]; /* "[switch|]port" */
	unsigned queue;
	uint64_t max;
};

struct pfc_row {
	char key[160];
	unsigned prio;
	uint64_t on_since; /* XOFF in force since, or UINT64_MAX */
	json_t *spans;
	uint64_t frames;
};

#define MAX_NAMES 1024 /* RSW_ZONE_MAX_SWITCHES */

struct view {
	json_t *sum;
	int zone;
	uint64_t t0, t1;
	struct queue_pick q[TOP_QUEUES];
	unsigned n_q;
	/* queue samples: instants (every queue_depth time) and the top queues' bytes at each */
	uint64_t *inst;
	uint64_t *val[TOP_QUEUES];
	size_t n_inst, cap_inst;
	/* ECN marks: times, and the switch of each (index into names) */
	uint64_t *ecn_t;
	unsigned *ecn_sw;
	size_t n_ecn, cap_ecn;
	char names[MAX_NAMES][64];
	unsigned n_names;
	/* every link direction with its tier and utilization; at scale: aggregates first */
	struct rsw_digest dg;
	int scale;
	struct pfc_row rows[MAX_PFC_ROWS];
	unsigned n_rows;
	int oom;
};

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* Calls fn for every port object of the summary with its "[switch|]port" label. */
static void each_port(struct view *v, void (*fn)(struct view *, const char *, json_t *))
{
	char key[160];
	json_t *sw, *port;
	size_t i, j;
	if (!v->zone) {
		json_array_foreach(json_object_get(v->sum, "ports"), j, port)
			fn(v, js(port, "name"), port);
		return;
	}
	json_array_foreach(json_object_get(v->sum, "switches"), i, sw)
		json_array_foreach(json_object_get(sw, "ports"), j, port) {
			snprintf(key, sizeof(key), "%s|%s", js(sw, "name"), js(port, "name"));
			fn(v, key, port);
		}
}

/* Keeps the TOP_QUEUES deepest queues (ties: the first met). */
static void pick_queues(struct view *v, const char *key, json_t *port)
{
	size_t i;
	json_t *q;
	json_array_foreach(json_object_get(port, "queues"), i, q) {
		uint64_t d = ju(q, "max_depth_bytes");
		if (!d)
			continue;
		unsigned slot = v->n_q < TOP_QUEUES ? v->n_q++ : TOP_QUEUES;
		if (slot == TOP_QUEUES) {
			unsigned min = 0;
			for (unsigned k = 1; k < TOP_QUEUES; k++)
				if (v->q[k].max < v->q[min].max)
					min = k;
			if (v->q[min].max >= d)
				continue;
			slot = min;
		}
		snprintf(v->q[slot].key, sizeof(v->q[slot].key), "%s", key);
		v->q[slot].queue = (unsigned)ju(q, "queue");
		v->q[slot].max = d;
	}
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 1024;
	void *np = realloc(*p, c * size);
	if (!np)
		return -1;
	*p = np;
	*cap = c;
	return 0;
}

static void sample(struct view *v, const char *key, uint64_t t, json_t *e)
{
	if (!v->n_inst || v->inst[v->n_inst - 1] != t) {
		size_t cap = v->cap_inst;
		if (grow((void **)&v->inst, &cap, v->n_inst, sizeof(uint64_t)) < 0) {
			v->oom = 1;
			return;
		}
		for (unsigned i = 0; i < v->n_q; i++) {
			size_t c = v->cap_inst;
			if (grow((void **)&v->val[i], &c, v->n_inst, sizeof(uint64_t)) < 0) {
				v->oom = 1;
				return;
			}
		}
		v->cap_inst = cap;
		v->inst[v->n_inst] = t;
		for (unsigned i = 0; i < v->n_q; i++)
			v->val[i][v->n_inst] = 0; /* not listed at this instant: empty */
		v->n_inst++;
	}
	unsigned q = (unsigned)ju(e, "queue");
	for (unsigned i = 0; i < v->n_q; i++)
		if (v->q[i].queue == q && !strcmp(v->q[i].key, key))
			v->val[i][v->n_inst - 1] = ju(e, "bytes");
}

static unsigned name_index(struct view *v, const char *name)
{
	for (unsigned i = 0; i < v->n_names; i++)
		if (!strcmp(v->names[i], name))
			return i;
	if (v->n_names == MAX_NAMES)
		return MAX_NAMES - 1;
	snprintf(v->names[v->n_names], sizeof(v->names[0]), "%s", name);
	return v->n_names++;
}

static void ecn(struct view *v, const char *sw, uint64_t t)
{
	size_t cap = v->cap_ecn;
	if (grow((void **)&v->ecn_t, &cap, v->n_ecn, sizeof(uint64_t)) < 0) {
		v->oom = 1;
		return;
	}
	size_t c2 = v->cap_ecn;
	if (grow((void **)&v->ecn_sw, &c2, v->n_ecn, sizeof(unsigned)) < 0) {
		v->oom = 1;
		return;
	}
	v->cap_ecn = cap;
	v->ecn_t[v->n_ecn] = t;
	v->ecn_sw[v->n_ecn++] = name_index(v, sw);
}

static struct pfc_row *row(struct view *v, const char *key, unsigned prio)
{
	for (unsigned i = 0; i < v->n_rows; i++)
		if (v->rows[i].prio == prio && !strcmp(v->rows[i].key, key))
			return &v->rows[i];
	if (v->n_rows == MAX_PFC_ROWS)
		return NULL;
	struct pfc_row *r = &v->rows[v->n_rows++];
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->prio = prio;
	r->on_since = UINT64_MAX;
	r->spans = json_array();
	return r;
}

/* A PFC frame sent: for each priority it names (class-enable bit), a non-zero time is an XOFF
 * (or its refresh), zero an XON. */
static void pfc_tx(struct view *v, const char *key, uint64_t t, json_t *e)
{
	unsigned ce = (unsigned)ju(e, "class_enable");
	json_t *time = json_object_get(e, "time");
	for (unsigned p = 0; p < 8; p++) {
		if (!(ce >> p & 1))
			continue;
		struct pfc_row *r = row(v, key, p);
		if (!r)
			continue;
		r->frames++;
		int xoff = json_integer_value(json_array_get(time, p)) > 0;
		if (xoff && r->on_since == UINT64_MAX) {
			r->on_since = t;
		} else if (!xoff && r->on_since != UINT64_MAX) {
			json_array_append_new(r->spans, json_pack("[f,f]", us(r->on_since), us(t)));
			r->on_since = UINT64_MAX;
		}
	}
}

static void event(struct view *v, json_t *e)
{
	const char *kind = js(e, "event");
	char key[160];
	if (json_object_get(e, "switch"))
		snprintf(key, sizeof(key), "%s|%s", js(e, "switch"), js(e, "port"));
	else
		snprintf(key, sizeof(key), "%s", js(e, "port"));
	uint64_t t = ju(e, "t");
	if (!strcmp(kind, "queue_depth"))
		sample(v, key, t, e);
	else if (!strcmp(kind, "ecn_mark"))
		ecn(v, v->zone ? js(e, "switch") : "switch", t);
	else if (!strcmp(kind, "pfc_tx"))
		pfc_tx(v, key, t, e);
}

/* s past the literal l, or NULL when s does not start with it */
static const char *skim_lit(const char *s, const char *l)
{
	while (*l)
		if (*s++ != *l++)
			return NULL;
	return s;
}

/* A string's characters up to its closing quote into out (at least one, fewer than size, none
 * a backslash, only [a-z_] when `word`): past the quote, or NULL */
static const char *skim_str(const char *s, char *out, size_t size, int word)
{
	size_t n = 0;
	for (; *s != '"'; s++) {
		int ok = word ? (*s >= 'a' && *s <= 'z') || *s == '_' : *s && *s != '\\';
		if (!ok || n + 1 == size)
			return NULL;
		out[n++] = *s;
	}
	out[n] = 0;
	return n ? s + 1 : NULL;
}

/* An event line as the run writes it, skimmed without parsing it whole (by hand: sscanf was
 * 4 % of a congested replay's CPU): 1 when it is not one the page draws, or an ECN mark (a
 * congested run logs one per packet) whose time and switch were read; 0: parse it whole (any
 * other form, a name with an escape). */
static int skim(struct view *v, const char *line)
{
	unsigned long long t = 0;
	char kind[32], sw[sizeof(v->names[0])];
	const char *s = skim_lit(line, "{\"t\":");
	unsigned digits = 0;
	for (; s && *s >= '0' && *s <= '9'; s++, digits++)
		t = t * 10 + (unsigned)(*s - '0');
	if (!digits || digits > 19) /* none, or past what a time in ns needs: parsed whole */
		return 0;
	s = skim_lit(s, ",\"event\":\"");
	if (!s || !(s = skim_str(s, kind, sizeof(kind), 1)))
		return 0;
	if (!strcmp(kind, "queue_depth") || !strcmp(kind, "pfc_tx"))
		return 0;
	if (strcmp(kind, "ecn_mark"))
		return 1;
	if (!v->zone) {
		ecn(v, "switch", t);
		return 1;
	}
	s = skim_lit(s, ",\"switch\":\"");
	if (!s || !skim_str(s, sw, sizeof(sw), 0))
		return 0;
	ecn(v, sw, t);
	return 1;
}

static int read_events(struct view *v, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot read", path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	while (!v->oom && getline(&line, &cap, f) > 0) {
		if (skim(v, line))
			continue;
		json_t *e = json_loads(line, 0, NULL);
		if (e)
			event(v, e);
		json_decref(e);
	}
	free(line);
	fclose(f);
	if (v->oom)
		snprintf(err, errlen, "%s: out of memory", path);
	return v->oom ? -1 : 0;
}

static void append_point(json_t *data, double x, const double *y, unsigned n)
{
	json_array_append_new(json_array_get(data, 0), json_real(x));
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(json_array_get(data, i + 1), json_real(y[i]));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Queue depth as true steps: a sample holds until the next sampling instant. The replay samples
 * every non-empty queue at the start of each period with events, before them, so a queue missing
 * at an instant was empty; when no queue at all was sampled for more than two periods (the
 * median gap), every queue was empty and the plot drops to 0 one period after the last
 * instant. */
static json_t *queue_block(struct view *v)
{
	json_t *b = rsw_block_chart("xy", "queue-depth", "Queue depth over time (deepest queues)",
				    "virtual time", "µs", "queue depth", "B");
	json_object_set_new(b, "step", json_true());
	json_t *data = json_object_get(b, "data");
	json_array_append_new(data, json_array());
	for (unsigned i = 0; i < v->n_q; i++) {
		char label[200];
		snprintf(label, sizeof(label), "%s q%u", v->q[i].key, v->q[i].queue);
		json_array_append_new(json_object_get(b, "series"),
				      json_pack("{s:s, s:s, s:i, s:I}", "label", label, "port",
						v->q[i].key, "queue", v->q[i].queue, "max_depth_bytes",
						(json_int_t)v->q[i].max));
		json_array_append_new(data, json_array());
	}
	uint64_t gap = 0;
	if (v->n_inst > 1) {
		uint64_t *g = malloc((v->n_inst - 1) * sizeof(*g));
		if (g) {
			for (size_t i = 0; i + 1 < v->n_inst; i++)
				g[i] = v->inst[i + 1] - v->inst[i];
			qsort(g, v->n_inst - 1, sizeof(*g), cmp_u64);
			gap = g[(v->n_inst - 1) / 2];
			free(g);
		}
	}
	size_t per = (v->n_inst + MAX_POINTS - 1) / MAX_POINTS;
	per = per ? per : 1;
	double y[TOP_QUEUES], zero[TOP_QUEUES] = {0};
	for (size_t i = 0; i < v->n_inst; i += per) {
		size_t end = i + per < v->n_inst ? i + per : v->n_inst;
		for (unsigned k = 0; k < v->n_q; k++) {
			y[k] = 0;
			for (size_t j = i; j < end; j++)
				y[k] = fmax(y[k], (double)v->val[k][j]);
		}
		append_point(data, us(v->inst[i]), y, v->n_q);
		uint64_t last = v->inst[end - 1];
		uint64_t next = end < v->n_inst ? v->inst[end] : v->t1;
		if (gap && next > last + 2 * gap)
			append_point(data, us(last + gap), zero, v->n_q);
	}
	if (per > 1)
		json_object_set_new(b, "note", json_string("More samples than the chart shows: each point "
							   "is the largest sample of its bucket."));
	json_object_set_new(b, "sampled_instants", json_integer((json_int_t)v->n_inst));
	if (!v->n_q) {
		json_object_set_new(b, "empty", json_string("No queue held a packet."));
	} else if (!v->n_inst) {
		char t[1200];
		uint64_t period = ju(v->sum, "queue_sample_ns");
		int n = period ? snprintf(t, sizeof(t), "No queue held a packet at the start of a "
					  "sampling period (every %llu ns): each was sent within the "
					  "nanosecond it arrived, or waited between samples. Peak depths:",
					  (unsigned long long)period)
			       : snprintf(t, sizeof(t), "Not sampled (replay --sample-ns 0). Peak depths:");
		for (unsigned i = 0; i < v->n_q && n > 0 && (size_t)n < sizeof(t); i++)
			n += snprintf(t + n, sizeof(t) - (size_t)n, "%s %s q%u %llu B", i ? "," : "",
				      v->q[i].key, v->q[i].queue, (unsigned long long)v->q[i].max);
		json_object_set_new(b, "empty", json_string(t));
	}
	return b;
}

/* Which series each switch's marks go to: its own while there are at most ECN_SERIES switches
 * with marks, else the ECN_SERIES - 1 that marked most have theirs and the rest are summed. */
static unsigned ecn_series(const struct view *v, unsigned *series_of, json_t *series)
{
	size_t *marks = calloc(v->n_names + 1, sizeof(*marks));
	unsigned n = 0;
	for (size_t i = 0; marks && i < v->n_ecn; i++)
		marks[v->ecn_sw[i]]++;
	for (unsigned s = 0; s < v->n_names; s++)
		series_of[s] = v->n_names <= ECN_SERIES ? s : ECN_SERIES - 1;
	if (v->n_names > ECN_SERIES && marks) {
		/* the most marks, the first met on ties */
		for (unsigned k = 0; k + 1 < ECN_SERIES; k++) {
			unsigned best = 0;
			for (unsigned s = 1; s < v->n_names; s++)
				if (series_of[s] == ECN_SERIES - 1 &&
				    (series_of[best] != ECN_SERIES - 1 || marks[s] > marks[best]))
					best = s;
			series_of[best] = k;
		}
	}
	free(marks);
	n = v->n_names <= ECN_SERIES ? v->n_names : ECN_SERIES;
	for (unsigned k = 0; k < n; k++) {
		char label[96];
		snprintf(label, sizeof(label), "other %u switches", v->n_names - (ECN_SERIES - 1));
		for (unsigned s = 0; s < v->n_names; s++)
			if (series_of[s] == k && (v->n_names <= ECN_SERIES || k + 1 < ECN_SERIES))
				snprintf(label, sizeof(label), "%s", v->names[s]);
		json_array_append_new(series, json_pack("{s:s}", "label", label));
	}
	return n;
}

/* ECN marks per µs in ECN_BINS bins over the run, one series per switch (at most ECN_SERIES). */
static json_t *ecn_block(struct view *v)
{
	json_t *b = rsw_block_chart("xy", "ecn-marks", "ECN marks over time", "virtual time", "µs",
				    "ECN-marked packets", "/µs");
	json_object_set_new(b, "step", json_true());
	json_t *data = json_object_get(b, "data");
	double span = v->t1 > v->t0 ? (double)(v->t1 - v->t0) : 1, w = span / ECN_BINS;
	json_object_set_new(b, "bin_us", json_real(w / 1e3));
	unsigned *series_of = calloc(v->n_names + 1, sizeof(*series_of));
	double *cnt = calloc((size_t)(ECN_BINS + 1) * ECN_SERIES, sizeof(double));
	if (!cnt || !series_of) {
		free(cnt);
		free(series_of);
		return b;
	}
	unsigned n = ecn_series(v, series_of, json_object_get(b, "series"));
	json_array_append_new(data, json_array());
	for (unsigned s = 0; s < n; s++)
		json_array_append_new(data, json_array());
	for (size_t i = 0; i < v->n_ecn; i++) {
		size_t k = (size_t)((double)(v->ecn_t[i] - v->t0) / w);
		cnt[(k < ECN_BINS ? k : ECN_BINS - 1) * ECN_SERIES + series_of[v->ecn_sw[i]]] += 1;
	}
	for (unsigned k = 0; k <= ECN_BINS && n; k++) {
		double y[ECN_SERIES];
		for (unsigned s = 0; s < n; s++)
			y[s] = k < ECN_BINS ? cnt[k * ECN_SERIES + s] / (w / 1e3) : 0;
		append_point(data, us(v->t0) + k * w / 1e3, y, n);
	}
	free(cnt);
	free(series_of);
	json_object_set_new(b, "total", json_integer((json_int_t)v->n_ecn));
	if (!v->n_ecn)
		json_object_set_new(b, "empty", json_string("No packet was ECN-marked."));
	return b;
}

static const char *const prio_color[8] = {"#7f7f7f", "#8c564b", "#17becf", "#d62728",
					  "#ff7f0e", "#9467bd", "#2ca02c", "#1f77b4"};

static json_t *pfc_block(struct view *v)
{
	json_t *rows = json_array();
	for (unsigned i = 0; i < v->n_rows; i++) {
		struct pfc_row *r = &v->rows[i];
		if (r->on_since != UINT64_MAX) /* still in force at the end */
			json_array_append_new(r->spans, json_pack("[f,f]", us(r->on_since), us(v->t1)));
		char label[200];
		snprintf(label, sizeof(label), "%s prio %u (%lu)", r->key, r->prio,
			 (unsigned long)r->frames);
		json_array_append_new(rows, json_pack("{s:s, s:s, s:i, s:I, s:s, s:O}", "label", label,
						      "port", r->key, "priority", r->prio, "frames",
						      (json_int_t)r->frames, "color",
						      prio_color[r->prio], "spans", r->spans));
		json_decref(r->spans);
	}
	json_t *b = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:[f,f], s:o}", "kind", "timeline",
			      "id", "pfc-timeline", "title",
			      "PFC pauses sent: XOFF in force, by port and priority (frames sent)", "x",
			      "label", "virtual time", "unit", "µs", "xrange", us(v->t0), us(v->t1),
			      "rows", rows);
	if (!v->n_rows)
		json_object_set_new(b, "empty", json_string("No PFC frame was sent."));
	return b;
}

static json_t *util_blocks(struct view *v)
{
	json_t *out = json_array(), *tier[RSW_LT_N] = {0};
	if (!v->zone) {
		json_t *b = rsw_block_chart("bars", "util-ports", "Ports: transmitted", "port", "",
					    "utilization", "%");
		json_array_append_new(json_object_get(b, "series"),
				      json_pack("{s:s}", "label", "utilization"));
		json_t *d = json_array(), *cats = json_array();
		size_t j;
		json_t *port;
		json_array_foreach(json_object_get(v->sum, "ports"), j, port) {
			json_array_append_new(cats, json_string(js(port, "name")));
			json_array_append_new(d, json_real(v->dg.dir[j].util));
		}
		json_array_append_new(json_object_get(b, "data"), d);
		json_object_set_new(b, "categories", cats);
		json_object_set_new(b, "ymax", json_real(100));
		json_array_append_new(out, b);
		return out;
	}
	for (size_t i = 0; i < v->dg.n_dir; i++) {
		const struct rsw_link_dir *x = &v->dg.dir[i];
		unsigned t = x->tier;
		if (!tier[t]) {
			char id[32];
			snprintf(id, sizeof(id), "util-tier%u", t);
			tier[t] = rsw_block_chart("bars", id, rsw_digest_tier_name(t), "link", "",
						  "utilization", "%");
			json_object_set_new(tier[t], "tier", json_string(rsw_digest_tier_name(t)));
			json_object_set_new(tier[t], "categories", json_array());
			json_object_set_new(tier[t], "ymax", json_real(100));
			json_array_append_new(json_object_get(tier[t], "series"),
					      json_pack("{s:s}", "label", "utilization"));
			json_array_append_new(json_object_get(tier[t], "data"), json_array());
		}
		char label[300];
		snprintf(label, sizeof(label), "%s→%s", x->from, x->to);
		json_array_append_new(json_object_get(tier[t], "categories"), json_string(label));
		json_array_append_new(json_array_get(json_object_get(tier[t], "data"), 0),
				      json_real(x->util));
	}
	for (unsigned t = 0; t < RSW_LT_N; t++)
		if (tier[t])
			json_array_append_new(out, tier[t]);
	return out;
}

/* Which flows share each uplink (leaf → spine), from each flow's path in summary.json: a bar per
 * uplink with its flow count (returned), and in *collided a table of the uplinks two or more
 * flows share, most flows first, naming the flows (at most 8 each). NULL for one switch or a
 * zone without uplinks. */
#define COLLIDED_SHOWN 8
/* The zone's uplinks and the flows over each: "from→to" → [{flow, bytes}...] (up), the labels
 * in the links' order (order) and as shown, the spine by its node name (shown). */
struct uplinks {
	json_t *up, *order, *shown;
};

static void uplinks_find(struct view *v, struct uplinks *u)
{
	size_t i, h;
	json_t *fl, *hop;
	for (size_t k = 0; k < v->dg.n_dir; k++) {
		const struct rsw_link_dir *x = &v->dg.dir[k];
		if (x->tier != RSW_LT_UP)
			continue;
		char label[300];
		snprintf(label, sizeof(label), "%s→%s", x->from, x->to);
		json_object_set_new(u->up, label, json_array());
		json_array_append_new(u->order, json_string(label));
		char spine[128];
		rsw_digest_node(x->to, spine, sizeof(spine));
		snprintf(label, sizeof(label), "%s→%s", x->from, spine);
		json_array_append_new(u->shown, json_string(label));
	}
	if (!json_array_size(u->order))
		return;
	json_array_foreach(json_object_get(v->sum, "flows"), i, fl)
		json_array_foreach(json_object_get(fl, "path"), h, hop) {
			char label[300];
			snprintf(label, sizeof(label), "%s→%s", js(hop, "from"), js(hop, "to"));
			json_t *on = json_object_get(u->up, label);
			if (on)
				json_array_append_new(on, json_pack("{s:i, s:I}", "flow", (json_int_t)i,
								    "bytes", (json_int_t)ju(hop, "bytes")));
		}
}

static size_t uplink_flows(const struct uplinks *u, size_t i)
{
	return json_array_size(json_object_get(u->up,
					       json_string_value(json_array_get(u->order, i))));
}

/* Flows per uplink: a histogram at zone scale, else a bar per uplink. */
static json_t *uplink_chart(struct view *v, const struct uplinks *u)
{
	size_t i, n_up = json_array_size(u->order);
	json_t *b, *lab;
	if (v->scale) {
		size_t *n = calloc(n_up + 1, sizeof(*n));
		json_array_foreach(u->order, i, lab)
			if (n)
				n[i] = uplink_flows(u, i);
		b = rsw_report_uplink_hist(n ? n : (size_t[1]){0}, n ? n_up : 0);
		free(n);
		return b;
	}
	b = rsw_block_chart("bars", "flows-uplink", "Flows per uplink", "uplink", "", "flows", "");
	json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "flows"));
	json_t *counts = json_array();
	json_array_foreach(u->order, i, lab)
		json_array_append_new(counts, json_integer((json_int_t)uplink_flows(u, i)));
	json_array_append_new(json_object_get(b, "data"), counts);
	json_object_set_new(b, "categories", json_incref(u->shown));
	return b;
}

/* One shared uplink's row: its flows, their megabytes and the first few by name. */
static json_t *collided_row(struct view *v, const struct uplinks *u, size_t idx, size_t flows)
{
	json_t *on = json_object_get(u->up, json_string_value(json_array_get(u->order, idx)));
	const char *name = json_string_value(json_array_get(u->shown, idx));
	json_t *e;
	char names[1536] = "";
	uint64_t bytes = 0;
	size_t k;
	json_array_foreach(on, k, e) {
		json_t *f = json_array_get(json_object_get(v->sum, "flows"), ju(e, "flow"));
		bytes += ju(e, "bytes");
		if (k < COLLIDED_SHOWN)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s→%s QP %lld", k ? ", " : "", js(f, "src"), js(f, "dst"),
				 json_integer_value(json_object_get(f, "dest_qp")));
	}
	if (flows > COLLIDED_SHOWN)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), " and %zu more",
			 flows - COLLIDED_SHOWN);
	return rsw_row("%s\t%zu\t%.3f\t%s", name, flows, (double)bytes / 1e6, names);
}

/* The uplinks two or more flows share, most flows first, then in the links' order; NULL when
 * none is shared. */
static json_t *collided_table(struct view *v, const struct uplinks *u)
{
	size_t n_up = json_array_size(u->order), n_shared = 0;
	struct shared { size_t flows, idx; } *sh = calloc(n_up, sizeof(*sh));
	for (size_t i = 0; i < n_up; i++) {
		size_t c = uplink_flows(u, i);
		if (sh && c >= 2)
			sh[n_shared++] = (struct shared){c, i};
	}
	for (size_t x = 1; x < n_shared; x++) /* insertion sort: stable, uplinks are few */
		for (size_t y = x; y > 0 && sh[y - 1].flows < sh[y].flows; y--) {
			struct shared t = sh[y];
			sh[y] = sh[y - 1];
			sh[y - 1] = t;
		}
	json_t *rows = json_array();
	for (size_t x = 0; x < n_shared && x < COLLIDED_ROWS; x++)
		json_array_append_new(rows, collided_row(v, u, sh[x].idx, sh[x].flows));
	free(sh);
	if (!json_array_size(rows)) {
		json_decref(rows);
		return NULL;
	}
	json_t *t = rsw_block_table("flow-collisions",
				    json_pack("[s,s,s,s]", "uplink", "flows", "MB", "which flows"),
				    rows);
	json_object_set_new(t, "left", json_pack("[i,i]", 0, 3));
	json_object_set_new(t, "shared", json_integer((json_int_t)n_shared));
	if (n_shared > COLLIDED_ROWS) {
		char note[200];
		snprintf(note, sizeof(note), "The %d uplinks with the most flows of %zu that two or "
			 "more flows share; summary.json has every flow's path.", COLLIDED_ROWS,
			 n_shared);
		json_object_set_new(t, "note", json_string(note));
	}
	return t;
}

static json_t *flows_per_uplink(struct view *v, json_t **collided)
{
	struct uplinks u = {json_object(), json_array(), json_array()};
	json_t *out = NULL;
	*collided = NULL;
	uplinks_find(v, &u);
	if (json_array_size(u.order)) {
		out = uplink_chart(v, &u);
		*collided = collided_table(v, &u);
	}
	json_decref(u.up);
	json_decref(u.order);
	json_decref(u.shown);
	return out;
}

static json_t *topology_block(struct view *v)
{
	json_t *nodes = json_array(), *links = json_array();
	size_t i;
	json_t *x, *l;
	json_array_foreach(json_object_get(v->sum, "switches"), i, x) {
		int leaf = json_object_get(v->dg.leaf, js(x, "name")) != NULL;
		json_array_append_new(nodes, json_pack("{s:s, s:i}", "name", js(x, "name"), "tier",
						       leaf ? 1 : 2));
	}
	json_array_foreach(json_object_get(v->sum, "hosts"), i, x)
		json_array_append_new(nodes, json_pack("{s:s, s:i}", "name", js(x, "name"), "tier", 0));
	json_array_foreach(json_object_get(v->sum, "links"), i, l) {
		char a[128], b[128];
		rsw_digest_node(js(l, "a"), a, sizeof(a));
		rsw_digest_node(js(l, "b"), b, sizeof(b));
		/* the digest holds each link's two directions in the links' order */
		const struct rsw_link_dir *ab = &v->dg.dir[2 * i], *ba = &v->dg.dir[2 * i + 1];
		json_array_append_new(links, json_pack("{s:s, s:s, s:s, s:s, s:[f,f], s:I}", "a",
						       js(l, "a"), "b", js(l, "b"), "a_node", a,
						       "b_node", b, "util", ab->util / 100,
						       ba->util / 100, "pfc",
						       (json_int_t)(ab->pfc_tx + ba->pfc_tx)));
	}
	json_t *b = json_pack("{s:s, s:s, s:o, s:o}", "kind", "topology", "id", "topology", "nodes",
			      nodes, "links", links);
	json_t *cycle = rsw_report_deadlock_cycle(v->sum);
	if (cycle)
		json_object_set_new(b, "deadlock", cycle);
	return b;
}

static double pct_ns(const uint64_t *c, size_t k, double p)
{
	size_t r = (size_t)ceil(p * (double)k); /* nearest rank */
	return (double)c[(r ? r : 1) - 1];
}

static json_t *fct_block(struct view *v, json_t **stats)
{
	json_t *flows = json_object_get(v->sum, "flows"), *fl;
	size_t n = json_array_size(flows), k = 0, i;
	uint64_t *c = calloc(n ? n : 1, sizeof(*c));
	json_t *b = rsw_block_chart("xy", "fct-cdf", "Flow completion times (CDF)", "completion time",
				    "µs", "fraction of flows", "");
	json_object_set_new(b, "step", json_true());
	json_object_set_new(b, "ymax", json_real(1));
	json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "flows"));
	*stats = json_object();
	if (!c)
		return b;
	json_array_foreach(flows, i, fl)
		if (json_is_integer(json_object_get(fl, "completion_ns")))
			c[k++] = ju(fl, "completion_ns");
	json_object_set_new(*stats, "flows", json_integer((json_int_t)n));
	json_object_set_new(*stats, "completed", json_integer((json_int_t)k));
	json_t *data = json_object_get(b, "data");
	json_array_append_new(data, json_array());
	json_array_append_new(data, json_array());
	if (k) {
		qsort(c, k, sizeof(*c), cmp_u64);
		/* the median of an even count is the mean of the two middle values */
		double med = k % 2 ? (double)c[k / 2] : ((double)c[k / 2 - 1] + (double)c[k / 2]) / 2;
		double p99 = pct_ns(c, k, 0.99);
		json_object_set_new(*stats, "median_us", json_real(med / 1e3));
		json_object_set_new(*stats, "p99_us", json_real(p99 / 1e3));
		json_object_set_new(*stats, "max_us", json_real(us(c[k - 1])));
		char ml[64], pl[64];
		snprintf(ml, sizeof(ml), "median %.3f µs", med / 1e3);
		snprintf(pl, sizeof(pl), "p99 %.3f µs", p99 / 1e3);
		json_object_set_new(b, "marks", json_pack("[{s:f, s:s}, {s:f, s:s}]", "x", med / 1e3,
							  "label", ml, "x", p99 / 1e3, "label", pl));
		/* the empirical CDF at each distinct completion time, from 0 at time 0 */
		double zero = 0;
		append_point(data, 0, &zero, 1);
		for (size_t j = 0; j < k; j++)
			if (j + 1 == k || c[j + 1] != c[j]) {
				double y = (double)(j + 1) / (double)n;
				append_point(data, us(c[j]), &y, 1);
			}
	}
	if (k < n)
		json_object_set_new(b, "note", json_string("The curve ends below 1: some flows did not "
							   "complete."));
	free(c);
	return b;
}

static json_t *overview_rows(struct view *v, const json_t *fct)
{
	json_t *rows = json_array();
	json_array_append_new(rows, rsw_row("virtual time\t%.3f µs to %.3f µs", us(v->t0), us(v->t1)));
	if (v->zone)
		json_array_append_new(rows, rsw_row("zone\t%zu switches, %zu hosts, %zu links",
						    v->dg.n_switches, v->dg.n_hosts,
						    v->dg.n_links));
	json_t *coll = json_object_get(v->sum, "collective_ns");
	json_array_append_new(rows, json_is_integer(coll)
					    ? rsw_row("all flows done in\t%.3f µs",
						      us((uint64_t)json_integer_value(coll)))
					    : rsw_row("all flows done in\tnot all flows arrived"));
	json_array_append_new(rows, rsw_row("flows completed\t%lld of %lld",
					    json_integer_value(json_object_get(fct, "completed")),
					    json_integer_value(json_object_get(fct, "flows"))));
	if (json_object_get(fct, "median_us"))
		json_array_append_new(
			rows, rsw_row("completion median / p99 / max\t%.3f / %.3f / %.3f µs",
				      json_real_value(json_object_get(fct, "median_us")),
				      json_real_value(json_object_get(fct, "p99_us")),
				      json_real_value(json_object_get(fct, "max_us"))));
	const char *k;
	json_t *x;
	json_object_foreach(json_object_get(v->sum, "drops"), k, x)
		json_array_append_new(rows, rsw_row("dropped: %s\t%lld", k, json_integer_value(x)));
	json_array_append_new(rows, rsw_row("ECN-marked packets\t%zu", v->n_ecn));
	json_array_append_new(rows, rsw_row("PFC frames sent by switches\t%llu",
					    (unsigned long long)v->dg.pfc_tx));
	json_t *cons = json_object_get(v->sum, "conservation");
	json_array_append_new(rows, rsw_row("conservation\t%s", json_is_true(json_object_get(cons, "holds"))
									? "holds"
									: "DOES NOT HOLD"));
	return rows;
}

static json_t *conservation_block(struct view *v)
{
	json_t *cons = json_object_get(v->sum, "conservation"), *rows = json_array(), *x;
	const char *k;
	json_object_foreach(cons, k, x)
		if (json_is_integer(x))
			json_array_append_new(rows, rsw_row("%s\t%lld", k, json_integer_value(x)));
	json_t *s = rsw_block_section("Conservation",
				      v->zone ? "entered + generated = delivered + left + consumed + "
						"dropped + queued + in_flight (frames)"
					      : "received = transmitted + dropped + consumed + queued "
						"(frames)");
	rsw_block_add(s, rsw_block_table("conservation", json_pack("[s,s]", "term", "frames"), rows));
	rsw_block_add(s, rsw_block_text(json_is_true(json_object_get(cons, "holds"))
						? "The equation holds: every frame is accounted for."
						: "The equation DOES NOT HOLD: frames are unaccounted for."));
	return s;
}

/* Closed-loop runs (--collective): the collective's figures and when each step completed. */
static json_t *closed_loop_block(struct view *v)
{
	json_t *c = json_object_get(v->sum, "collective");
	if (!json_is_object(c))
		return NULL;
	json_t *s = rsw_block_section("Closed-loop collective", NULL), *rows = json_array();
	json_array_append_new(rows, rsw_row("pattern\t%s over %zu ranks", js(c, "pattern"),
					    json_array_size(json_object_get(c, "ranks"))));
	json_array_append_new(rows, rsw_row("size\t%llu B", (unsigned long long)ju(c, "size_bytes")));
	json_array_append_new(rows, json_is_true(json_object_get(c, "complete"))
					    ? rsw_row("time\t%.3f µs", us(ju(c, "time_ns")))
					    : rsw_row("time\tNOT complete"));
	static const char *const keys[] = {"algbw_GBps", "busbw_GBps"};
	for (unsigned i = 0; i < 2; i++) {
		json_t *x = json_object_get(c, keys[i]);
		json_array_append_new(rows, json_is_number(x)
						    ? rsw_row("%s\t%.2f GB/s", keys[i], json_number_value(x))
						    : rsw_row("%s\t–", keys[i]));
	}
	static const char *const counts[] = {"retransmitted", "timeouts", "cnps", "rate_cuts",
					     "injected_drops"};
	for (unsigned i = 0; i < 5; i++)
		json_array_append_new(rows, rsw_row("%s\t%llu", counts[i],
						    (unsigned long long)ju(c, counts[i])));
	/* the receivers' reordering, when the run reports it (ooo=, or ARS) */
	static const char *const ooo[] = {"ooo_packets", "ooo_max_distance", "reorder_max_packets",
					  "reorder_max_bytes"};
	for (unsigned i = 0; i < 4 && json_object_get(c, "ooo_packets"); i++)
		json_array_append_new(rows, rsw_row("%s\t%llu", ooo[i],
						    (unsigned long long)ju(c, ooo[i])));
	json_t *mode = json_object_get(c, "ooo");
	if (json_is_string(mode))
		json_array_append_new(rows, rsw_row("receivers\tooo=%s", json_string_value(mode)));
	else if (mode)
		json_array_append_new(rows, rsw_row("receivers\tooo=accept on %zu of them",
						    json_array_size(mode)));
	rsw_block_add(s, rsw_block_table("collective", json_pack("[s,s]", "figure", "value"), rows));
	json_t *b = rsw_block_chart("xy", "step-done", "Step completion", "step", "",
				    "completed at", "µs");
	json_object_set_new(b, "points", json_true());
	json_array_append_new(json_object_get(b, "series"), json_pack("{s:s}", "label", "done"));
	json_t *data = json_object_get(b, "data"), *x = json_array(), *y = json_array(), *st;
	size_t i;
	json_array_foreach(json_object_get(c, "step_done_ns"), i, st) {
		json_array_append_new(x, json_integer((json_int_t)i));
		json_array_append_new(y, json_is_integer(st) ? json_real(us((uint64_t)json_integer_value(st)))
							     : json_null());
	}
	json_array_append_new(data, x);
	json_array_append_new(data, y);
	rsw_block_add(s, b);
	return s;
}

json_t *rsw_replay_view(const char *dir, char *err, size_t errlen)
{
	char p[4096];
	json_error_t je;
	snprintf(p, sizeof(p), "%s/summary.json", dir);
	json_t *sum = json_load_file(p, 0, &je);
	if (!sum) {
		snprintf(err, errlen, "%s:%d: %s", p, je.line, je.text);
		return NULL;
	}
	json_t *out = rsw_replay_view_of(dir, sum, err, errlen);
	json_decref(sum);
	return out;
}

json_t *rsw_replay_view_of(const char *dir, json_t *sum, char *err, size_t errlen)
{
	char p[4096];
	struct view *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	v->sum = json_incref(sum);
	v->zone = json_object_get(v->sum, "switches") != NULL;
	if (rsw_digest_build(v->sum, &v->dg) < 0) {
		snprintf(err, errlen, "out of memory");
		json_decref(v->sum);
		free(v);
		return NULL;
	}
	v->scale = rsw_digest_at_scale(&v->dg);
	v->t0 = ju(v->sum, "start_ns");
	v->t1 = ju(v->sum, "end_ns");
	each_port(v, pick_queues);
	snprintf(p, sizeof(p), "%s/events.jsonl", dir);
	json_t *out = NULL;
	if (read_events(v, p, err, errlen) == 0) {
		json_t *fct_stats = NULL, *fct = fct_block(v, &fct_stats);
		out = json_pack("{s:s, s:b, s:O}", "dir", dir, "zone", v->zone, "summary", v->sum);
		json_object_set_new(out, "fct", fct);
		json_object_set_new(out, "fct_stats", fct_stats);
		json_object_set_new(out, "overview", overview_rows(v, fct_stats));
		json_object_set_new(out, "queue", queue_block(v));
		json_object_set_new(out, "ecn", ecn_block(v));
		json_object_set_new(out, "pfc", pfc_block(v));
		if (v->scale) {
			struct rsw_digest *d = &v->dg;
			json_object_set_new(out, "util", json_pack("[o]", rsw_report_util_cdf(d)));
			json_object_set_new(out, "util_dist", rsw_report_util_dist(d));
			json_object_set_new(out, "util_top", rsw_report_util_top(d, TOP_LINKS));
			json_object_set_new(out, "fabric", rsw_report_heatmaps(v->sum, d));
		} else {
			json_object_set_new(out, "util", util_blocks(v));
		}
		if (v->zone && !v->scale)
			json_object_set_new(out, "topology", topology_block(v));
		json_t *dl = rsw_report_deadlock_section(v->sum);
		if (dl)
			json_object_set_new(out, "deadlock", dl);
		json_t *collided, *fu = v->zone ? flows_per_uplink(v, &collided) : NULL;
		if (fu)
			json_object_set_new(out, "flows_uplink", fu);
		if (fu && collided)
			json_object_set_new(out, "flow_collisions", collided);
		json_object_set_new(out, "conservation", conservation_block(v));
		json_t *cl = closed_loop_block(v);
		if (cl)
			json_object_set_new(out, "closed_loop", cl);
	} else {
		for (unsigned i = 0; i < v->n_rows; i++)
			json_decref(v->rows[i].spans);
	}
	for (unsigned i = 0; i < TOP_QUEUES; i++)
		free(v->val[i]);
	free(v->inst);
	free(v->ecn_t);
	free(v->ecn_sw);
	rsw_digest_free(&v->dg);
	json_decref(v->sum);
	free(v);
	return out;
}

static json_t *section_of(const char *title, const char *text, json_t *block)
{
	json_t *s = rsw_block_section(title, text);
	rsw_block_add(s, json_incref(block));
	return s;
}

/* The page of view v (rsw_replay_view), written to path. */
static int report_of_view(json_t *v, const char *path, char *err, size_t errlen)
{
	json_t *sum = json_object_get(v, "summary");
	char title[300];
	snprintf(title, sizeof(title), "rocesw replay: %s",
		 json_is_true(json_object_get(v, "zone")) ? js(sum, "zone") : "one switch");
	/* nothing of the run's directory: the same run gives the same page wherever it is written */
	json_t *page = json_pack("{s:s, s:[]}", "title", title, "blocks");
	rsw_block_add(page, rsw_block_table("overview", json_pack("[s,s]", "", ""),
					    json_incref(json_object_get(v, "overview"))));
	size_t i;
	json_t *b, *fabric = json_object_get(v, "fabric");
	if (fabric) {
		json_t *sec = rsw_block_section(
			"Fabric", "Link utilization as heat maps: a cell per spine and leaf for each "
			"direction of the links between them, and per rack the busiest host link. "
			"Hover a cell for its value.");
		json_array_foreach(fabric, i, b)
			rsw_block_add(sec, json_incref(b));
		rsw_block_add(page, sec);
	}
	if (json_object_get(v, "topology"))
		rsw_block_add(page, section_of("Topology", "Each link is coloured by the utilization of "
							   "its busier direction; hover a link for both.",
					       json_object_get(v, "topology")));
	if (json_object_get(v, "deadlock"))
		rsw_block_add(page, json_incref(json_object_get(v, "deadlock")));
	rsw_block_add(page, section_of("Queues", NULL, json_object_get(v, "queue")));
	json_t *cl = json_object_get(v, "closed_loop");
	if (cl)
		rsw_block_add(page, json_incref(cl));
	json_t *u = rsw_block_section("Link utilization",
				      "Wire bits (frames + FCS, preamble, gap) over the run's window, "
				      "grouped by tier.");
	json_array_foreach(json_object_get(v, "util"), i, b)
		rsw_block_add(u, json_incref(b));
	if (json_object_get(v, "util_dist")) {
		json_t *t = json_incref(json_object_get(v, "util_dist"));
		json_object_set_new(t, "heading", json_string("Per tier, % of wire time "
							      "(nearest-rank percentiles)"));
		rsw_block_add(u, t);
		t = json_incref(json_object_get(v, "util_top"));
		json_object_set_new(t, "heading", json_string("The link directions with the most "
							      "bytes"));
		rsw_block_add(u, t);
	}
	rsw_block_add(page, u);
	json_t *fu = json_object_get(v, "flows_uplink");
	if (fu) {
		json_t *sec = rsw_block_section("Flows per uplink",
						"Which flows each leaf → spine uplink carried (from "
						"each flow's path in summary.json), and the uplinks "
						"flows share: where ECMP made them collide.");
		rsw_block_add(sec, json_incref(fu));
		if (json_object_get(v, "flow_collisions"))
			rsw_block_add(sec, json_incref(json_object_get(v, "flow_collisions")));
		rsw_block_add(page, sec);
	}
	rsw_block_add(page, section_of("PFC", NULL, json_object_get(v, "pfc")));
	rsw_block_add(page, section_of("ECN", NULL, json_object_get(v, "ecn")));
	rsw_block_add(page, section_of("Flow completion",
				       "Median: the middle value (the mean of the two middle values "
				       "for an even count); p99: the nearest-rank 99th percentile.",
				       json_object_get(v, "fct")));
	rsw_block_add(page, json_incref(json_object_get(v, "conservation")));
	int rc = rsw_page_write(path, page);
	if (rc < 0)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	json_decref(page);
	return rc;
}

int rsw_replay_report(const char *dir, const char *path, char *err, size_t errlen)
{
	json_t *v = rsw_replay_view(dir, err, errlen);
	int rc = v ? report_of_view(v, path, err, errlen) : -1;
	json_decref(v);
	return rc;
}

int rsw_replay_report_of(const char *dir, json_t *sum, const char *path, char *err,
			 size_t errlen)
{
	json_t *v = rsw_replay_view_of(dir, sum, err, errlen);
	int rc = v ? report_of_view(v, path, err, errlen) : -1;
	json_decref(v);
	return rc;
}
