/* The dataplane's counters (`show counters` reply) in Prometheus text exposition format 0.0.4:
 * names prefixed rocesw_, counters ending in _total, base units (seconds, bytes), labels port /
 * queue / priority / reason / group / member / mode (and switch, first, for a zone's switches),
 * every label value escaped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_metrics.h"

struct out {
	char *buf;
	size_t len, cap;
	int oom;
};

static void emit(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = o->cap - o->len;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (o->buf && (size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = o->cap ? o->cap * 2 : 65536;
		while (cap < o->len + (size_t)n + 1)
			cap *= 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			o->oom = 1;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
}

/* A label value as the exposition format wants it: backslash, double quote and line feed
 * escaped (names come from the user's config, which may hold any of them). */
static void label(struct out *o, const char *v)
{
	for (v = v ? v : ""; *v; v++) {
		if (*v == '\\' || *v == '"')
			emit(o, "\\%c", *v);
		else if (*v == '\n')
			emit(o, "\\n");
		else
			emit(o, "%c", *v);
	}
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long num(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void head(struct out *o, const char *name, const char *type, const char *help)
{
	emit(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The switches a page covers: one (no name, no label) or a zone's, each sample then labelled
 * switch="NAME" so that one scrape tells the zone's switches apart. */
struct scope {
	const char *sw;
	json_t *c;
};

/* "name{" and the switch label if any; the caller writes the rest of the labels. */
static void open_sample(struct out *o, const char *name, const struct scope *sc)
{
	emit(o, "%s{", name);
	if (sc->sw) {
		emit(o, "switch=\"");
		label(o, sc->sw);
		emit(o, "\",");
	}
}

/* A sample with no label of its own: "name value" for one switch, "name{switch=...}" in a zone */
static void plain_sample(struct out *o, const char *name, const struct scope *sc, long long v)
{
	if (!sc->sw) {
		emit(o, "%s %lld\n", name, v);
		return;
	}
	emit(o, "%s{switch=\"", name);
	label(o, sc->sw);
	emit(o, "\"} %lld\n", v);
}

/* One family over every port: value = port[key]. */
static void per_port(struct out *o, const struct scope *sc, unsigned n, const char *name,
		     const char *key, const char *help)
{
	json_t *p;
	size_t i;
	head(o, name, "counter", help);
	for (unsigned k = 0; k < n; k++)
		json_array_foreach(json_object_get(sc[k].c, "ports"), i, p) {
			open_sample(o, name, &sc[k]);
			emit(o, "port=\"");
			label(o, str(p, "name"));
			emit(o, "\"} %lld\n", num(p, key));
		}
}

/* One family over every port and priority: value = port.pfc[SAI_PORT_STAT_PFC_<p>_<what>] /
 * scale (1e6 turns the SAI's microseconds into seconds). */
static void per_prio(struct out *o, const struct scope *sc, unsigned n, const char *name,
		     const char *what, double scale, const char *help)
{
	json_t *p;
	size_t i;
	head(o, name, "counter", help);
	for (unsigned k = 0; k < n; k++)
		json_array_foreach(json_object_get(sc[k].c, "ports"), i, p)
			for (unsigned prio = 0; prio < 8; prio++) {
				char key[64];
				snprintf(key, sizeof(key), "SAI_PORT_STAT_PFC_%u_%s", prio, what);
				long long v = num(json_object_get(p, "pfc"), key);
				open_sample(o, name, &sc[k]);
				emit(o, "port=\"");
				label(o, str(p, "name"));
				if (scale == 1)
					emit(o, "\",priority=\"%u\"} %lld\n", prio, v);
				else
					emit(o, "\",priority=\"%u\"} %.6f\n", prio, (double)v / scale);
			}
}

/* One family over every port and queue: value = queue[key]. */
static void per_queue(struct out *o, const struct scope *sc, unsigned n, const char *name,
		      const char *type, const char *key, const char *help)
{
	json_t *p, *q;
	size_t i, j;
	head(o, name, type, help);
	for (unsigned k = 0; k < n; k++)
		json_array_foreach(json_object_get(sc[k].c, "ports"), i, p)
			json_array_foreach(json_object_get(p, "queues"), j, q) {
				open_sample(o, name, &sc[k]);
				emit(o, "port=\"");
				label(o, str(p, "name"));
				emit(o, "\",queue=\"%lld\"} %lld\n", num(q, "queue"), num(q, key));
			}
}

static void daemon_metrics(struct out *o, json_t *counters, const struct rsw_prom_daemon *d)
{
	head(o, "rocesw_dataplane_up", "gauge", "1 while the dataplane answers");
	emit(o, "rocesw_dataplane_up %d\n", counters ? 1 : 0);
	head(o, "rocesw_dataplane_restarts_total", "counter",
	     "dataplane restarts after it exited unexpectedly");
	emit(o, "rocesw_dataplane_restarts_total %llu\n", (unsigned long long)d->restarts);
	head(o, "rocesw_config_reloads_total", "counter", "config reloads by result");
	emit(o, "rocesw_config_reloads_total{result=\"ok\"} %llu\n",
	     (unsigned long long)d->reloads_ok);
	emit(o, "rocesw_config_reloads_total{result=\"error\"} %llu\n",
	     (unsigned long long)d->reloads_failed);
	head(o, "rocesw_config_generation", "gauge",
	     "table generation the dataplane reported for the last config applied");
	if (!d->switch_generation) {
		emit(o, "rocesw_config_generation %llu\n", (unsigned long long)d->generation);
	} else {
		/* a zone: each switch has its own tables and generation */
		const char *k;
		json_t *v;
		json_object_foreach(d->switch_generation, k, v) {
			struct scope sc = {k, NULL};
			plain_sample(o, "rocesw_config_generation", &sc,
				     (long long)json_integer_value(v));
		}
	}
	head(o, "rocesw_config_reload_in_progress", "gauge",
	     "1 while a reload is sent and its outcome not yet known");
	emit(o, "rocesw_config_reload_in_progress %d\n", d->reload_in_progress);
	head(o, "rocesw_metrics_connections_cut_total", "counter",
	     "metrics connections shut down at their deadline (ROCESWD metrics_timeout)");
	emit(o, "rocesw_metrics_connections_cut_total %llu\n", (unsigned long long)d->http_cut);
}

static void switch_metrics(struct out *o, const struct scope *sc, unsigned n)
{
	static const char *const totals[][2] = {
		{"received", "packets received on all ports"},
		{"transmitted", "packets transmitted on all ports"},
		{"dropped", "packets dropped, every reason"},
		{"consumed", "PFC and PAUSE frames consumed"},
	};
	for (unsigned t = 0; t < 4; t++) {
		char name[64];
		snprintf(name, sizeof(name), "rocesw_packets_%s_total", totals[t][0]);
		head(o, name, "counter", totals[t][1]);
		for (unsigned k = 0; k < n; k++)
			plain_sample(o, name, &sc[k],
				     num(json_object_get(sc[k].c, "conservation"), totals[t][0]));
	}
	head(o, "rocesw_packets_queued", "gauge", "packets held in the traffic manager");
	for (unsigned k = 0; k < n; k++)
		plain_sample(o, "rocesw_packets_queued", &sc[k],
			     num(json_object_get(sc[k].c, "conservation"), "queued"));
	per_port(o, sc, n, "rocesw_port_rx_packets_total", "rx_packets", "packets received");
	per_port(o, sc, n, "rocesw_port_rx_bytes_total", "rx_bytes", "bytes received");
	per_port(o, sc, n, "rocesw_port_tx_packets_total", "tx_packets", "packets transmitted");
	per_port(o, sc, n, "rocesw_port_tx_bytes_total", "tx_bytes", "bytes transmitted");
	per_prio(o, sc, n, "rocesw_pfc_rx_frames_total", "RX_PKTS", 1,
		 "PFC frames received with the priority enabled (SAI_PORT_STAT_PFC_<p>_RX_PKTS)");
	per_prio(o, sc, n, "rocesw_pfc_tx_frames_total", "TX_PKTS", 1,
		 "PFC frames sent for the priority (SAI_PORT_STAT_PFC_<p>_TX_PKTS)");
	per_prio(o, sc, n, "rocesw_pfc_rx_pause_seconds_total", "RX_PAUSE_DURATION_US", 1e6,
		 "time the priority was paused in seconds (SAI_PORT_STAT_PFC_<p>_RX_PAUSE_DURATION_US)");
	static const char *const queue_families[][4] = {
		{"rocesw_queue_packets_total", "counter", "SAI_QUEUE_STAT_PACKETS",
		 "packets transmitted from the queue"},
		{"rocesw_queue_bytes_total", "counter", "SAI_QUEUE_STAT_BYTES",
		 "bytes transmitted from the queue"},
		{"rocesw_queue_dropped_packets_total", "counter", "SAI_QUEUE_STAT_DROPPED_PACKETS",
		 "packets dropped at the queue"},
		{"rocesw_queue_ecn_marked_packets_total", "counter",
		 "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "packets marked CE"},
		{"rocesw_queue_watermark_bytes", "gauge", "SAI_QUEUE_STAT_WATERMARK_BYTES",
		 "highest occupancy of the queue"},
		{"rocesw_pfcwd_storms_detected_total", "counter",
		 "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "PFC storms detected"},
		{"rocesw_pfcwd_storms_restored_total", "counter",
		 "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", "PFC storms restored"},
	};
	for (unsigned f = 0; f < sizeof(queue_families) / sizeof(queue_families[0]); f++)
		per_queue(o, sc, n, queue_families[f][0], queue_families[f][1],
			  queue_families[f][2], queue_families[f][3]);
	head(o, "rocesw_drops_total", "counter", "packets dropped, by reason");
	for (unsigned k = 0; k < n; k++) {
		const char *key;
		json_t *v;
		json_object_foreach(json_object_get(sc[k].c, "drops"), key, v) {
			open_sample(o, "rocesw_drops_total", &sc[k]);
			emit(o, "reason=\"");
			label(o, key);
			emit(o, "\"} %lld\n", (long long)json_integer_value(v));
		}
	}
	head(o, "rocesw_ecmp_member_packets_total", "counter",
	     "packets sent through each ECMP group member");
	for (unsigned k = 0; k < n; k++) {
		json_t *g, *m;
		size_t i, j;
		json_array_foreach(json_object_get(sc[k].c, "ecmp_groups"), i, g)
			json_array_foreach(json_object_get(g, "members"), j, m) {
				open_sample(o, "rocesw_ecmp_member_packets_total", &sc[k]);
				emit(o, "group=\"");
				label(o, str(g, "name"));
				emit(o, "\",member=\"%lld\",port=\"", num(m, "member"));
				label(o, str(m, "port"));
				emit(o, "\"} %lld\n", num(m, "packets"));
			}
	}
}

/* Each ARS group's counters (docs/ars.md), the families written only when some group of the
 * page uses ARS. */
static void ars_metrics(struct out *o, const struct scope *sc, unsigned n)
{
	static const char *const fam[][3] = {
		{"rocesw_ars_packets_total", "RSW_ARS_PACKETS",
		 "packets whose next hop the group's ARS decided"},
		{"rocesw_ars_nexthop_reassignments_total",
		 "SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS",
		 "flows moved to another member (SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS)"},
		{"rocesw_ars_port_reassignments_total", "SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS",
		 "flows moved to another egress port (SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS)"},
		{"rocesw_ars_packet_drops_total", "SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS",
		 "packets dropped with no usable member (SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS)"},
		{"rocesw_ars_flowlet_table_full_total", "RSW_ARS_FLOWLET_TABLE_FULL",
		 "packets that kept the hashed member: their flowlet entry held by an active flow"},
	};
	json_t *g;
	size_t i;
	int any = 0;
	for (unsigned k = 0; k < n && !any; k++)
		json_array_foreach(json_object_get(sc[k].c, "ecmp_groups"), i, g)
			any |= json_object_get(g, "ars") != NULL;
	for (unsigned f = 0; any && f < sizeof(fam) / sizeof(fam[0]); f++) {
		head(o, fam[f][0], "counter", fam[f][2]);
		for (unsigned k = 0; k < n; k++)
			json_array_foreach(json_object_get(sc[k].c, "ecmp_groups"), i, g) {
				json_t *a = json_object_get(g, "ars");
				if (!a)
					continue;
				open_sample(o, fam[f][0], &sc[k]);
				emit(o, "group=\"");
				label(o, str(g, "name"));
				emit(o, "\",mode=\"");
				label(o, str(a, "mode"));
				emit(o, "\"} %lld\n", num(a, fam[f][1]));
			}
	}
}

char *rsw_prom_render(json_t *counters, const struct rsw_prom_daemon *d, size_t *len)
{
	struct out o = {0};
	head(&o, "rocesw_build_info", "gauge", "the version of rocesw serving these metrics");
	emit(&o, "rocesw_build_info{version=\"");
	label(&o, RSW_VERSION);
	emit(&o, "\"} 1\n");
	if (d)
		daemon_metrics(&o, counters, d);
	json_t *sws = json_object_get(counters, "switches");
	if (counters && !sws) {
		struct scope one = {NULL, counters};
		switch_metrics(&o, &one, 1);
		ars_metrics(&o, &one, 1);
	} else if (sws) {
		unsigned n = (unsigned)json_array_size(sws);
		struct scope *sc = calloc(n ? n : 1, sizeof(*sc));
		if (!sc) {
			free(o.buf);
			return NULL;
		}
		for (unsigned k = 0; k < n; k++)
			sc[k] = (struct scope){str(json_array_get(sws, k), "name"),
					       json_array_get(sws, k)};
		switch_metrics(&o, sc, n);
		ars_metrics(&o, sc, n);
		free(sc);
	}
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
