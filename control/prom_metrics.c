/* The dataplane's counters (`show counters` reply) in Prometheus text exposition format 0.0.4:
 * names prefixed rocesw_, counters ending in _total, labels port / queue / priority / reason. */
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
	json_array_foreach(ports, i, p)
		emit(o, "%s{port=\"%s\"} %lld\n", name, json_string_value(json_object_get(p, "name")),
		     num(p, key));
}

/* One family over every port and priority: value = port.pfc[SAI_PORT_STAT_PFC_<p>_<what>]. */
static void per_prio(struct out *o, json_t *ports, const char *name, const char *what,
		     const char *help)
{
	json_t *p;
	size_t i;
	head(o, name, "counter", help);
	json_array_foreach(ports, i, p)
		for (unsigned prio = 0; prio < 8; prio++) {
			char k[64];
			snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_%s", prio, what);
			emit(o, "%s{port=\"%s\",priority=\"%u\"} %lld\n", name,
			     json_string_value(json_object_get(p, "name")), prio,
			     num(json_object_get(p, "pfc"), k));
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
		json_array_foreach(json_object_get(p, "queues"), j, q)
			emit(o, "%s{port=\"%s\",queue=\"%lld\"} %lld\n", name,
			     json_string_value(json_object_get(p, "name")), num(q, "queue"), num(q, key));
}

char *rsw_prom_render(json_t *counters, const struct rsw_prom_daemon *d, size_t *len)
{
	struct out o = {0};
	json_t *ports = json_object_get(counters, "ports");
	json_t *cons = json_object_get(counters, "conservation");
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
		per_prio(&o, ports, "rocesw_pfc_rx_frames_total", "RX_PKTS",
			 "PFC frames received with the priority enabled (SAI_PORT_STAT_PFC_<p>_RX_PKTS)");
		per_prio(&o, ports, "rocesw_pfc_tx_frames_total", "TX_PKTS",
			 "PFC frames sent for the priority (SAI_PORT_STAT_PFC_<p>_TX_PKTS)");
		per_prio(&o, ports, "rocesw_pfc_rx_pause_duration_microseconds_total",
			 "RX_PAUSE_DURATION_US", "time the priority was paused (µs)");
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
		json_object_foreach(json_object_get(counters, "drops"), k, v)
			emit(&o, "rocesw_drops_total{reason=\"%s\"} %lld\n", k,
			     (long long)json_integer_value(v));
		json_t *g, *m;
		size_t i, j;
		head(&o, "rocesw_ecmp_member_packets_total", "counter",
		     "packets sent through each ECMP group member");
		json_array_foreach(json_object_get(counters, "ecmp_groups"), i, g)
			json_array_foreach(json_object_get(g, "members"), j, m)
				emit(&o, "rocesw_ecmp_member_packets_total{group=\"%s\",member=\"%lld\","
				     "port=\"%s\"} %lld\n", json_string_value(json_object_get(g, "name")),
				     num(m, "member"), json_string_value(json_object_get(m, "port")),
				     num(m, "packets"));
	}
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}
