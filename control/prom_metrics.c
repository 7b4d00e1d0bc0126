/* The dataplane's counters (`show counters` reply) in Prometheus text exposition format 0.0.4:
 * names prefixed rocesw_, counters ending in _total, base units (seconds, bytes), labels port /
 * queue / priority / reason / group / member, every label value escaped. */
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

/* One family over every port: value = port[key]. */
static void per_port(struct out *o, json_t *ports, const char *name, const char *key,
		     const char *help)
{
	json_t *p;
	size_t i;
	head(o, name, "counter", help);
	json_array_foreach(ports, i, p) {
		emit(o, "%s{port=\"", name);
		label(o, str(p, "name"));
		emit(o, "\"} %lld\n", num(p, key));
	}
}

/* One family over every port and priority: value = port.pfc[SAI_PORT_STAT_PFC_<p>_<what>] /
 * scale (1e6 turns the SAI's microseconds into seconds). */
static void per_prio(struct out *o, json_t *ports, const char *name, const char *what,
		     double scale, const char *help)
{
	json_t *p;
	size_t i;
	head(o, name, "counter", help);
	json_array_foreach(ports, i, p)
		for (unsigned prio = 0; prio < 8; prio++) {
			char k[64];
			snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_%s", prio, what);
			long long v = num(json_object_get(p, "pfc"), k);
			emit(o, "%s{port=\"", name);
			label(o, str(p, "name"));
			if (scale == 1)
				emit(o, "\",priority=\"%u\"} %lld\n", prio, v);
			else
				emit(o, "\",priority=\"%u\"} %.6f\n", prio, (double)v / scale);
		}
}

/* One family over every port and queue: value = queue[key]. */
static void per_queue(struct out *o, json_t *ports, const char *name, const char *type,
		      const char *key, const char *help)
{
	json_t *p, *q;
	size_t i, j;
	head(o, name, type, help);
	json_array_foreach(ports, i, p)
		json_array_foreach(json_object_get(p, "queues"), j, q) {
			emit(o, "%s{port=\"", name);
			label(o, str(p, "name"));
			emit(o, "\",queue=\"%lld\"} %lld\n", num(q, "queue"), num(q, key));
		}
}

char *rsw_prom_render(json_t *counters, const struct rsw_prom_daemon *d, size_t *len)
{
	struct out o = {0};
	json_t *ports = json_object_get(counters, "ports");
	json_t *cons = json_object_get(counters, "conservation");
	head(&o, "rocesw_build_info", "gauge", "the version of rocesw serving these metrics");
	emit(&o, "rocesw_build_info{version=\"");
	label(&o, RSW_VERSION);
	emit(&o, "\"} 1\n");
	if (d) {
		head(&o, "rocesw_dataplane_up", "gauge", "1 while the dataplane answers");
		emit(&o, "rocesw_dataplane_up %d\n", counters ? 1 : 0);
		head(&o, "rocesw_dataplane_restarts_total", "counter",
		     "dataplane restarts after it exited unexpectedly");
		emit(&o, "rocesw_dataplane_restarts_total %llu\n", (unsigned long long)d->restarts);
		head(&o, "rocesw_config_reloads_total", "counter", "config reloads by result");
		emit(&o, "rocesw_config_reloads_total{result=\"ok\"} %llu\n",
		     (unsigned long long)d->reloads_ok);
		emit(&o, "rocesw_config_reloads_total{result=\"error\"} %llu\n",
		     (unsigned long long)d->reloads_failed);
		head(&o, "rocesw_config_generation", "gauge",
		     "table generation the dataplane reported for the last config applied");
		emit(&o, "rocesw_config_generation %llu\n", (unsigned long long)d->generation);
		head(&o, "rocesw_config_reload_in_progress", "gauge",
		     "1 while a reload is sent and its outcome not yet known");
		emit(&o, "rocesw_config_reload_in_progress %d\n", d->reload_in_progress);
		head(&o, "rocesw_metrics_connections_cut_total", "counter",
		     "metrics connections shut down at their deadline (ROCESWD metrics_timeout)");
		emit(&o, "rocesw_metrics_connections_cut_total %llu\n",
		     (unsigned long long)d->http_cut);
	}
	if (counters) {
		static const char *const totals[][2] = {
			{"received", "packets received on all ports"},
			{"transmitted", "packets transmitted on all ports"},
			{"dropped", "packets dropped, every reason"},
			{"consumed", "PFC and PAUSE frames consumed"},
		};
		for (unsigned k = 0; k < 4; k++) {
			char name[64];
			snprintf(name, sizeof(name), "rocesw_packets_%s_total", totals[k][0]);
			head(&o, name, "counter", totals[k][1]);
			emit(&o, "%s %lld\n", name, num(cons, totals[k][0]));
		}
		head(&o, "rocesw_packets_queued", "gauge", "packets held in the traffic manager");
		emit(&o, "rocesw_packets_queued %lld\n", num(cons, "queued"));
		per_port(&o, ports, "rocesw_port_rx_packets_total", "rx_packets", "packets received");
		per_port(&o, ports, "rocesw_port_rx_bytes_total", "rx_bytes", "bytes received");
		per_port(&o, ports, "rocesw_port_tx_packets_total", "tx_packets", "packets transmitted");
		per_port(&o, ports, "rocesw_port_tx_bytes_total", "tx_bytes", "bytes transmitted");
		per_prio(&o, ports, "rocesw_pfc_rx_frames_total", "RX_PKTS", 1,
			 "PFC frames received with the priority enabled (SAI_PORT_STAT_PFC_<p>_RX_PKTS)");
		per_prio(&o, ports, "rocesw_pfc_tx_frames_total", "TX_PKTS", 1,
			 "PFC frames sent for the priority (SAI_PORT_STAT_PFC_<p>_TX_PKTS)");
		per_prio(&o, ports, "rocesw_pfc_rx_pause_seconds_total", "RX_PAUSE_DURATION_US", 1e6,
			 "time the priority was paused in seconds (SAI_PORT_STAT_PFC_<p>_RX_PAUSE_DURATION_US)");
		per_queue(&o, ports, "rocesw_queue_packets_total", "counter", "SAI_QUEUE_STAT_PACKETS",
			  "packets transmitted from the queue");
		per_queue(&o, ports, "rocesw_queue_bytes_total", "counter", "SAI_QUEUE_STAT_BYTES",
			  "bytes transmitted from the queue");
		per_queue(&o, ports, "rocesw_queue_dropped_packets_total", "counter",
			  "SAI_QUEUE_STAT_DROPPED_PACKETS", "packets dropped at the queue");
		per_queue(&o, ports, "rocesw_queue_ecn_marked_packets_total", "counter",
			  "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "packets marked CE");
		per_queue(&o, ports, "rocesw_queue_watermark_bytes", "gauge",
			  "SAI_QUEUE_STAT_WATERMARK_BYTES", "highest occupancy of the queue");
		per_queue(&o, ports, "rocesw_pfcwd_storms_detected_total", "counter",
			  "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "PFC storms detected");
		per_queue(&o, ports, "rocesw_pfcwd_storms_restored_total", "counter",
			  "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED", "PFC storms restored");
		head(&o, "rocesw_drops_total", "counter", "packets dropped, by reason");
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(counters, "drops"), k, v) {
			emit(&o, "rocesw_drops_total{reason=\"");
			label(&o, k);
			emit(&o, "\"} %lld\n", (long long)json_integer_value(v));
		}
		json_t *g, *m;
		size_t i, j;
		head(&o, "rocesw_ecmp_member_packets_total", "counter",
		     "packets sent through each ECMP group member");
		json_array_foreach(json_object_get(counters, "ecmp_groups"), i, g)
			json_array_foreach(json_object_get(g, "members"), j, m) {
				emit(&o, "rocesw_ecmp_member_packets_total{group=\"");
				label(&o, str(g, "name"));
				emit(&o, "\",member=\"%lld\",port=\"", num(m, "member"));
				label(&o, str(m, "port"));
				emit(&o, "\"} %lld\n", num(m, "packets"));
			}
	}
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
