#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>
#include <rte_mbuf.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tm/clock.h"
#include "dataplane/tm/pfc.h"
#include "dataplane/tm/shaper.h"
#include "dataplane/tm/tm.h"
#include "replay.h"

#define NEVER UINT64_MAX
#define REPLAY_MBUFS 16384

struct input {
	pcap_t *p;
	uint16_t port;
	int eof;
	uint64_t t;           /* timestamp of the frame held in buf */
	uint32_t len;
	const uint8_t *data;  /* valid until the next read */
};

struct replay {
	struct rsw_switch *sw;
	const struct rsw_fib *fib;
	struct rsw_tm *tm;
	struct rte_mempool *pool;
	struct rsw_clock clock;
	pcap_dumper_t *out[RSW_MAX_PORTS];
	uint64_t port_next[RSW_MAX_PORTS];
	uint64_t rnd;
	struct rsw_replay_result *res;
	FILE *events;
	uint64_t sample_ns, next_sample;
	struct rsw_flow_table flows;
	struct rsw_replay_flow *fl;
	size_t fl_cap;
	int oom;
};

/* The flow record of a parsed packet, created on first sight. */
static struct rsw_replay_flow *flow_rec(struct replay *r, const struct rsw_pkt_meta *m)
{
	struct rsw_flow_key k;
	rsw_flow_key_of(m, &k);
	long fi = rsw_flow_table_find_add(&r->flows, &k);
	if (fi < 0)
		goto oom;
	if ((size_t)fi >= r->fl_cap) {
		size_t cap = r->fl_cap ? r->fl_cap * 2 : 1024;
		void *p = realloc(r->fl, cap * sizeof(*r->fl));
		if (!p)
			goto oom;
		r->fl = p;
		memset(r->fl + r->fl_cap, 0, (cap - r->fl_cap) * sizeof(*r->fl));
		r->fl_cap = cap;
	}
	return &r->fl[fi];
oom:
	r->oom = 1;
	return NULL;
}

static const char *pname(const struct replay *r, uint16_t p)
{
	return r->fib->ports[p].name;
}

/* One event-log line: {"t":NS,"event":KIND,"port":NAME, ...fields}; compact JSON. */
static void ev_write(struct replay *r, uint64_t t, const char *kind, int port, json_t *fields)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_integer((json_int_t)t));
	json_object_set_new(o, "event", json_string(kind));
	if (port >= 0)
		json_object_set_new(o, "port", json_string(pname(r, (uint16_t)port)));
	if (fields)
		json_object_update(o, fields);
	json_dumpf(o, r->events, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', r->events);
	json_decref(o);
	json_decref(fields);
}

static void ev_pfc(struct replay *r, uint64_t t, const char *kind, uint16_t port, uint8_t enable,
		   const uint16_t time[8])
{
	if (!r->events)
		return;
	json_t *f = json_object(), *a = json_array();
	json_object_set_new(f, "class_enable", json_integer(enable));
	for (unsigned i = 0; i < 8; i++)
		json_array_append_new(a, json_integer(time[i]));
	json_object_set_new(f, "time", a);
	ev_write(r, t, kind, port, f);
}

/* Watchdog lines from the TM, with the virtual time. */
static void ev_tm_log(void *arg, const char *line)
{
	struct replay *r = arg;
	if (!r->events)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "message", json_string(line));
	ev_write(r, rsw_clock_now(&r->clock), "pfcwd", -1, f);
}

static uint64_t ts_ns(const struct pcap_pkthdr *h, int nano)
{
	return (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec * (nano ? 1u : 1000u);
}

static int advance(struct input *in, char *err, size_t errlen)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	int rc = pcap_next_ex(in->p, &h, &d);
	if (rc == -2) {
		in->eof = 1;
		return 0;
	}
	if (rc != 1) {
		snprintf(err, errlen, "%s", pcap_geterr(in->p));
		return -1;
	}
	in->t = ts_ns(h, pcap_get_tstamp_precision(in->p) == PCAP_TSTAMP_PRECISION_NANO);
	in->len = h->caplen;
	in->data = d;
	return 0;
}

static void write_frame(struct replay *r, uint16_t port, uint64_t t, const uint8_t *data, uint32_t len)
{
	struct pcap_pkthdr h;
	h.ts.tv_sec = (time_t)(t / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000u); /* nanosecond file */
	h.caplen = h.len = len;
	pcap_dump((u_char *)r->out[port], &h, data);
}

static void drop(struct replay *r, unsigned reason, uint16_t port, uint64_t t)
{
	r->res->drops[reason]++;
	r->res->dropped++;
	if (r->events) {
		json_t *f = json_object();
		json_object_set_new(f, "reason", json_string(rsw_drop_reason_name(reason)));
		ev_write(r, t, "drop", port, f);
	}
}

/* One frame entering port at t. */
static void arrive(struct replay *r, uint16_t port, uint64_t t, const uint8_t *data, uint32_t len)
{
	struct rsw_replay_port_stats *ps = &r->res->port[port];
	ps->rx_packets++;
	ps->rx_bytes += len;
	r->res->received++;
	struct rsw_pkt_meta m;
	if (rsw_parse(data, len, &m)) {
		drop(r, m.drop, port, t);
		return;
	}
	if (m.l2_kind != RSW_L2_DATA) {
		if (m.l2_kind == RSW_L2_PFC)
			ps->pfc_rx_frames++;
		else
			ps->pause_rx_frames++;
		rsw_tm_pause_rx(r->tm, r->fib, port, &m, t);
		ev_pfc(r, t, m.l2_kind == RSW_L2_PFC ? "pfc_rx" : "pause_rx", port,
		       m.l2_kind == RSW_L2_PFC ? m.pfc_class_enable : 0xFF, m.pfc_time);
		r->res->consumed++;
		return;
	}
	if (m.l3 != RSW_L3_NONE) {
		struct rsw_replay_flow *f = flow_rec(r, &m);
		if (f) {
			if (!f->packets_in++)
				f->first_in_ns = t;
			f->bytes_in += len;
		}
	}
	struct rte_mbuf *mb = rte_pktmbuf_alloc(r->pool);
	uint8_t *buf = mb ? (uint8_t *)rte_pktmbuf_append(mb, (uint16_t)len) : NULL;
	if (!buf || len > UINT16_MAX) {
		rte_pktmbuf_free(mb);
		drop(r, RSW_DROP_NO_MBUF, port, t);
		return;
	}
	memcpy(buf, data, len);
	m.in_port = port;
	rsw_ingress(r->fib, buf, &m, &r->rnd);
	if (m.drop) {
		rte_pktmbuf_free(mb);
		drop(r, m.drop, port, t);
		return;
	}
	rsw_egress_rewrite(r->fib, buf, &m);
	const struct rsw_pkt_meta *mp = &m;
	uint8_t verdict;
	if (rsw_tm_admit_bin(r->tm, r->fib, &mb, &mp, 1, &verdict) != 1) {
		rte_pktmbuf_free(mb);
		drop(r, verdict, m.egress_port, t);
		return;
	}
	if (rsw_tm_enqueue_burst(r->tm, r->fib, m.egress_port, m.tc & 7, &mb, 1) != 1) {
		rte_pktmbuf_free(mb);
		drop(r, RSW_DROP_VOQ_FULL, m.egress_port, t);
		return;
	}
	if (r->port_next[m.egress_port] == NEVER || r->port_next[m.egress_port] > t)
		r->port_next[m.egress_port] = t;
}

static int port_has_packets(const struct replay *r, uint16_t p)
{
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
		if (rsw_tm_queue_bytes(r->tm, p, q))
			return 1;
	return 0;
}

/* When port p can next do something: its wire frees, or a pause ends. */
static uint64_t next_time(const struct replay *r, uint16_t p, uint64_t t)
{
	const struct rsw_tm_port *tp = &r->tm->port[p];
	if (!port_has_packets(r, p))
		return NEVER;
	uint64_t free_ns = (tp->shaper.next_free_ps + 999u) / 1000u;
	if (free_ns > t)
		return free_ns;
	uint64_t next = NEVER;
	for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
		if (rsw_tm_queue_bytes(r->tm, p, q) && tp->pause.until_ns[q] > t &&
		    tp->pause.until_ns[q] < next)
			next = tp->pause.until_ns[q];
	return next;
}

/* Port p at time t, after every event: the watchdog, and the PFC frame it owes its peer (XOFF,
 * refresh or XON), sent ahead of its data. */
static void control(struct replay *r, uint16_t p, uint64_t t)
{
	uint8_t enable;
	uint16_t times[8];
	rsw_tm_watchdog(r->tm, r->fib, p, t);
	if (rsw_tm_pfc_due(r->tm, r->fib, p, t, &enable, times)) {
		uint8_t f[RSW_PFC_FRAME_LEN];
		unsigned n = rsw_pfc_build(f, r->fib->ports[p].mac, enable, times);
		write_frame(r, p, t, f, n);
		ev_pfc(r, t, "pfc_tx", p, enable, times);
		r->res->port[p].pfc_tx_frames++;
		rsw_shaper_send(&r->tm->port[p].shaper, t, n);
		r->port_next[p] = next_time(r, p, t);
	}
}

/* Port p at time t: at most one departure. */
static void service(struct replay *r, uint16_t p, uint64_t t)
{
	struct rte_mbuf *m;
	if (rsw_tm_dequeue(r->tm, r->fib, p, t, &m, 1) == 1) {
		write_frame(r, p, t, rte_pktmbuf_mtod(m, uint8_t *), m->pkt_len);
		if (r->events && rsw_tm_tag(m)->marked) {
			json_t *f = json_object();
			json_object_set_new(f, "queue", json_integer(rsw_tm_tag(m)->queue));
			ev_write(r, t, "ecn_mark", p, f);
		}
		r->res->port[p].tx_packets++;
		r->res->port[p].tx_bytes += m->pkt_len;
		struct rsw_pkt_meta pm;
		struct rsw_replay_flow *f;
		if (rsw_parse(rte_pktmbuf_mtod(m, uint8_t *), m->pkt_len, &pm) == 0 &&
		    (f = flow_rec(r, &pm)) != NULL) {
			const struct rsw_tm_port_cfg *pc = &r->fib->tm[p];
			uint32_t speed = pc->unshaped ? 0 : r->fib->ports[p].speed_mbps;
			f->packets_out++;
			f->done_ns = t + rsw_wire_ns(m->pkt_len, speed);
		}
		r->res->transmitted++;
		if (t > r->res->end_ns)
			r->res->end_ns = t;
		rte_pktmbuf_free(m);
	}
	r->port_next[p] = next_time(r, p, t);
}

static int open_outputs(struct replay *r, const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							    PCAP_TSTAMP_PRECISION_NANO);
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint16_t p = 0; p < r->fib->n_ports; p++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s.pcap", dir, r->fib->ports[p].name);
		r->out[p] = pcap_dump_open(dead, path);
		if (!r->out[p]) {
			snprintf(err, errlen, "%s: %s", path, pcap_geterr(dead));
			pcap_close(dead);
			return -1;
		}
	}
	pcap_close(dead);
	return 0;
}

void rsw_replay_result_free(struct rsw_replay_result *res)
{
	rsw_tm_free(res->tm);
	free(res->flow_key);
	free(res->flow);
	res->tm = NULL;
	res->flow_key = NULL;
	res->flow = NULL;
}

int rsw_replay_run(struct rsw_switch *sw, const struct rsw_replay_input *in_spec, unsigned n_in,
		   const char *out_dir, const struct rsw_replay_opts *opts,
		   struct rsw_replay_result *res, char *err, size_t errlen)
{
	struct replay r = {.sw = sw, .fib = rsw_switch_fib(sw), .res = res,
			   .rnd = 0x9E3779B97F4A7C15ull, .events = opts->events,
			   .sample_ns = opts->sample_ns};
	uint64_t until_ns = opts->until_ns;
	FILE *progress = opts->progress;
	struct input *in = calloc(n_in + 1, sizeof(*in));
	int rc = -1;
	memset(res, 0, sizeof(*res));
	if (!in) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rsw_clock_init_virtual(&r.clock, 0);
	uint32_t room = RTE_PKTMBUF_HEADROOM + 9216 + 64;
	char name[64];
	static unsigned instance;
	snprintf(name, sizeof(name), "rsw_replay%u", instance++);
	r.pool = rte_pktmbuf_pool_create(name, REPLAY_MBUFS, 0, 0, (uint16_t)room, SOCKET_ID_ANY);
	/* events are in ns, the shaper in ps: a 1 ns slack lets a busy port start its next frame
	 * at the exact ps its wire freed instead of the ns rounded up */
	r.tm = rsw_tm_new(name, r.fib->n_ports, 1, r.fib, 1, err, errlen);
	if (!r.pool || !r.tm) {
		if (!r.pool)
			snprintf(err, errlen, "cannot create the packet pool");
		goto out;
	}
	r.tm->log = ev_tm_log;
	r.tm->log_arg = &r;
	if (open_outputs(&r, out_dir, err, errlen) < 0)
		goto out;
	for (unsigned i = 0; i < n_in; i++) {
		char perr[PCAP_ERRBUF_SIZE];
		in[i].port = in_spec[i].port;
		in[i].p = pcap_open_offline_with_tstamp_precision(in_spec[i].path,
								  PCAP_TSTAMP_PRECISION_NANO, perr);
		if (!in[i].p) {
			snprintf(err, errlen, "%s: %s", in_spec[i].path, perr);
			goto out;
		}
		if (pcap_datalink(in[i].p) != DLT_EN10MB) {
			snprintf(err, errlen, "%s: not an Ethernet capture", in_spec[i].path);
			goto out;
		}
		char e[256];
		if (advance(&in[i], e, sizeof(e)) < 0) {
			snprintf(err, errlen, "%s: %s", in_spec[i].path, e);
			goto out;
		}
	}
	for (uint16_t p = 0; p < RSW_MAX_PORTS; p++)
		r.port_next[p] = NEVER;
	time_t last_progress = time(NULL);
	for (;;) {
		uint64_t ta = NEVER, tp = NEVER;
		int ai = -1;
		for (unsigned i = 0; i < n_in; i++)
			if (!in[i].eof && in[i].t < ta) {
				ta = in[i].t;
				ai = (int)i;
			}
		for (uint16_t p = 0; p < r.fib->n_ports; p++)
			if (r.port_next[p] < tp)
				tp = r.port_next[p];
		uint64_t t = ta < tp ? ta : tp;
		if (t == NEVER || (until_ns && t > until_ns))
			break;
		rsw_clock_set(&r.clock, t);
		t = rsw_clock_now(&r.clock); /* time never goes back, even if a capture does */
		if (ai >= 0 && ta <= tp) {
			arrive(&r, in[ai].port, t, in[ai].data, in[ai].len);
			char e[256];
			if (advance(&in[ai], e, sizeof(e)) < 0) {
				snprintf(err, errlen, "%s: %s", in_spec[ai].path, e);
				goto out;
			}
		}
		for (uint16_t p = 0; p < r.fib->n_ports; p++)
			if (r.port_next[p] <= t)
				service(&r, p, t);
		for (uint16_t p = 0; p < r.fib->n_ports; p++)
			control(&r, p, t);
		if (r.events && r.sample_ns && t >= r.next_sample) {
			for (uint16_t p = 0; p < r.fib->n_ports; p++)
				for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
					uint64_t b = rsw_tm_queue_bytes(r.tm, p, q);
					if (!b)
						continue;
					json_t *f = json_object();
					json_object_set_new(f, "queue", json_integer(q));
					json_object_set_new(f, "bytes", json_integer((json_int_t)b));
					ev_write(&r, t, "queue_depth", p, f);
				}
			r.next_sample = t - t % r.sample_ns + r.sample_ns;
		}
		if (progress && time(NULL) != last_progress) {
			last_progress = time(NULL);
			fprintf(progress, "\rreplay: %.6f s virtual, %lu packets in, %lu out",
				(double)t / 1e9, (unsigned long)res->received,
				(unsigned long)res->transmitted);
			fflush(progress);
		}
	}
	if (progress && time(NULL) != last_progress)
		fprintf(progress, "\n");
	res->queued = rsw_tm_queued(r.tm);
	for (uint16_t p = 0; p < r.fib->n_ports; p++)
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			uint64_t f = r.tm->port[p].qs[q].pfcwd_flushed;
			res->drops[RSW_DROP_PFCWD_DROP] += f;
			res->dropped += f;
		}
	r.tm->log = NULL; /* its argument lives on this stack */
	if (r.oom) {
		snprintf(err, errlen, "out of memory for the flow table");
		goto out;
	}
	res->tm = r.tm;
	r.tm = NULL;
	res->n_flows = r.flows.n;
	res->flow_key = r.flows.key;
	res->flow = r.fl;
	r.flows.key = NULL;
	r.fl = NULL;
	rc = 0;
out:
	for (unsigned i = 0; i < n_in; i++)
		if (in[i].p)
			pcap_close(in[i].p);
	for (uint16_t p = 0; p < RSW_MAX_PORTS; p++)
		if (r.out[p])
			pcap_dump_close(r.out[p]);
	rsw_tm_free(r.tm);
	rsw_flow_table_free(&r.flows);
	free(r.fl);
	free(in);
	/* the pool stays: the TM handed back to the caller may still hold its packets */
	return rc;
}
