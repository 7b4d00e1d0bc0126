/* The replay engine: one agenda of wake-ups (inputs, hosts, link heads, switch ports, PFC
 * timers) processed in time order; links carry frames with their serialization and propagation
 * delay; flows are followed from where they enter to where they leave. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_mbuf_dyn.h>

#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/roce_build.h"
#include "dataplane/pkt/roce_hdr.h"
#include "dataplane/tm/tm.h"
#include "replay_int.h"

/* Packet memory grows with what the buffers hold, in pools per frame-size class (a 64-byte frame
 * does not take a 9 KB buffer): a class that runs out gets a new pool twice the size of its last,
 * up to REPLAY_POOL_MAX frames, for as long as memory lasts. Creating a pool touches its memory,
 * so a small run does not pay for a deep one. */
#define REPLAY_POOL_MIN 8192u
#define REPLAY_POOL_MAX 131072u
#define REPLAY_FRAME_ROOM 9216u
#define REPLAY_FLOW_CACHE 8192u /* flows decided, all switches together: 1 MiB */

/* ---- flows ---- */

uint32_t rp_flow_index(struct replay *r, const struct rsw_pkt_meta *m)
{
	struct rsw_flow_key k;
	struct rsw_replay_order o = rp_order(r);
	rsw_flow_key_of(m, &k);
	/* packets of a flow come in trains: the last flow found is the likely one */
	if (r->last_flow != NO_FLOW && !memcmp(&k, &r->flows.key[r->last_flow], sizeof(k)))
		return r->last_flow;
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
	if (!r->fl[fi].first.ordered)
		r->fl[fi].first = o;
	r->last_flow = (uint32_t)fi;
	return (uint32_t)fi;
oom:
	r->oom = 1;
	return NO_FLOW;
}

void rp_flow_enter(struct replay *r, uint32_t flow, uint64_t t, uint32_t len)
{
	if (flow == NO_FLOW)
		return;
	struct rsw_replay_flow *f = &r->fl[flow];
	if (!f->packets_in++)
		f->first_in_ns = t;
	f->bytes_in += len;
}

void rp_flow_leave(struct replay *r, uint32_t flow, uint64_t done_ns)
{
	if (flow == NO_FLOW)
		return;
	struct rsw_replay_flow *f = &r->fl[flow];
	f->packets_out++;
	if (done_ns > f->done_ns)
		f->done_ns = done_ns;
}

/* A frame of the flow put on link direction dir: its path. Paths are a few hops, so a short
 * array searched from its end (the hop just added is the likely one) beats a hash. */
static void flow_hop(struct replay *r, uint32_t flow, uint32_t dir, uint32_t len)
{
	if (flow == NO_FLOW)
		return;
	struct rsw_replay_order o = rp_order(r);
	struct rsw_replay_flow *f = &r->fl[flow];
	for (uint32_t i = f->n_hop; i-- > 0;)
		if (f->hop[i].dir == dir) {
			f->hop[i].packets++;
			f->hop[i].bytes += len;
			return;
		}
	uint32_t n = f->n_hop;
	if (n == 0 || (n >= 4 && !(n & (n - 1)))) { /* capacity 4, 8, 16...: full at those */
		void *h = realloc(f->hop, (n ? 2 * n : 4) * sizeof(*f->hop));
		if (!h) {
			r->oom = 1;
			return;
		}
		f->hop = h;
	}
	f->hop[f->n_hop++] =
		(struct rsw_replay_hop){.dir = dir, .packets = 1, .bytes = len, .first = o};
}

/* ---- frames, captures, wake-ups, events ---- */

static const uint16_t mem_room[REPLAY_MEM_CLASSES] = {512, 2048, 4608, REPLAY_FRAME_ROOM};

static struct rte_mempool *add_pool(struct replay *r, unsigned c)
{
	static unsigned instance;
	char name[RTE_MEMPOOL_NAMESIZE];
	if (r->mem[c].n == r->mem[c].cap) {
		unsigned cap = r->mem[c].cap ? 2 * r->mem[c].cap : 8;
		void *p = realloc(r->mem[c].pool, cap * sizeof(*r->mem[c].pool));
		if (!p)
			return NULL;
		r->mem[c].pool = p;
		r->mem[c].cap = cap;
	}
	unsigned shift = r->mem[c].n < 4 ? r->mem[c].n : 4;
	unsigned n = REPLAY_POOL_MIN << shift;
	snprintf(name, sizeof(name), "rsw_replay%u", instance++);
	struct rte_mempool *mp = rp_pool_create(name, n <= REPLAY_POOL_MAX ? n : REPLAY_POOL_MAX,
						RTE_PKTMBUF_HEADROOM + mem_room[c]);
	if (mp)
		r->mem[c].pool[r->mem[c].n++] = mp;
	return mp;
}

/* What a packet buffer's data room may hold besides zeros, kept in its private area across
 * its uses (DPDK zeroes the area once, when the pool is made): with zeroed set, nothing beyond
 * dirty_to but the 4 bytes at tail_off (none if 0). A generated RoCE frame is its headers, a
 * zero payload and its ICRC: written into a buffer so known, it costs its headers and the last
 * frame's leftovers, not a copy of 4 KiB (and 64 cache lines) per frame. */
struct rp_room {
	uint8_t zeroed;
	uint16_t dirty_to;
	uint16_t tail_off;
};
_Static_assert(sizeof(struct rp_room) <= RP_ROOM_PRIV && RP_ROOM_PRIV % RTE_MBUF_PRIV_ALIGN == 0,
	       "rp_room fits a packet buffer's private area");

static void copy_sparse(struct rp_room *k, uint8_t *buf, uint32_t room, const uint8_t *data,
			uint32_t len)
{
	if (!k->zeroed) {
		memset(buf, 0, room);
		*k = (struct rp_room){.zeroed = 1};
	} else {
		if (k->dirty_to > RSW_ROCE_HDR_MAX)
			memset(buf + RSW_ROCE_HDR_MAX, 0, k->dirty_to - RSW_ROCE_HDR_MAX);
		if (k->tail_off)
			memset(buf + k->tail_off, 0, RSW_ICRC_LEN);
	}
	if (len <= RSW_ROCE_HDR_MAX + RSW_ICRC_LEN) {
		memcpy(buf, data, len);
		k->dirty_to = (uint16_t)len;
		k->tail_off = 0;
		return;
	}
	memcpy(buf, data, RSW_ROCE_HDR_MAX);
	memcpy(buf + len - RSW_ICRC_LEN, data + len - RSW_ICRC_LEN, RSW_ICRC_LEN);
	k->dirty_to = RSW_ROCE_HDR_MAX;
	k->tail_off = (uint16_t)(len - RSW_ICRC_LEN);
}

static void copy_whole(struct rp_room *k, uint8_t *buf, const uint8_t *data, uint32_t len)
{
	memcpy(buf, data, len);
	uint32_t to = k->tail_off ? k->tail_off + RSW_ICRC_LEN : 0;
	to = to > len ? to : len;
	k->dirty_to = (uint16_t)(to > k->dirty_to ? to : k->dirty_to);
	k->tail_off = 0;
}

struct rte_mbuf *rp_mbuf(struct replay *r, const uint8_t *data, uint32_t len, uint32_t flow,
			 int roce_sparse)
{
	struct rte_mbuf *m = NULL;
	unsigned c = 0;
	while (c < REPLAY_MEM_CLASSES && len > mem_room[c])
		c++;
	if (c < REPLAY_MEM_CLASSES) {
		/* the newest pool first: older ones are full while queues grow */
		for (unsigned i = r->mem[c].n; !m && i > 0; i--)
			m = rte_pktmbuf_alloc(r->mem[c].pool[i - 1]);
		/* out of memory, trying a new pool per frame would cost a failed allocation of up
		 * to a gigabyte each: the frames are no_mbuf drops, and a new pool is tried again
		 * after 65536 of them (memory the machine may have freed meanwhile) */
		if (!m && r->mem[c].skip)
			r->mem[c].skip--;
		else if (!m && add_pool(r, c))
			m = rte_pktmbuf_alloc(r->mem[c].pool[r->mem[c].n - 1]);
		else if (!m)
			r->mem[c].skip = 65536;
	}
	uint32_t room = m ? rte_pktmbuf_tailroom(m) : 0;
	uint8_t *buf = m ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;
	if (!buf) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	struct rp_room *k = rte_mbuf_to_priv(m);
	if (roce_sparse)
		copy_sparse(k, buf, room, data, len);
	else
		copy_whole(k, buf, data, len);
	*frame_flow(r, m) = flow;
	return m;
}

/* the pcap file format's header sizes: file 24 bytes, record 16 (ts_sec, ts_frac, caplen, len) */
#define PCAP_FILE_HDR 24
#define PCAP_RECORD_HDR 16

void rp_write(struct rp_cap *c, uint64_t t, const uint8_t *data, uint32_t len)
{
	if (!c->d)
		return;
	const struct rsw_replay_capture *cfg = c->cfg;
	struct pcap_pkthdr h;
	h.ts.tv_sec = (time_t)(t / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(t % 1000000000u); /* nanosecond file */
	h.caplen = h.len = len;
	if (cfg) {
		if (t < cfg->from_ns || (cfg->to_ns && t >= cfg->to_ns))
			return;
		if (cfg->filter && !pcap_offline_filter(&cfg->prog, &h, data))
			return;
		if (cfg->every > 1 && c->seen++ % cfg->every)
			return;
		if (cfg->snaplen && len > cfg->snaplen)
			h.caplen = cfg->snaplen;
	}
	pcap_dump((u_char *)c->d, &h, data);
	c->bytes += PCAP_RECORD_HDR + h.caplen;
	/* pcap_dump says nothing of a failed write: a look every 4096 records (a full disk ends
	 * the run then, not hours later) */
	if (!(++c->records & 4095) && fflush(pcap_dump_file(c->d)) != 0 && !c->werr->err) {
		c->werr->err = errno;
		snprintf(c->werr->path, sizeof(c->werr->path), "%s", c->path);
	}
}
void rp_cap_next(struct replay *r, struct cap_in *in)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	int rc = pcap_next_ex(in->p, &h, &d);
	if (rc != 1) {
		in->eof = 1;
		if (rc != -2 && !r->failed) {
			snprintf(r->err, r->errlen, "%s: %s", in->path, pcap_geterr(in->p));
			r->failed = 1;
		}
		return;
	}
	in->t = (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec; /* opened in ns */
	in->len = h->caplen;
	in->data = d;
}

void rp_schedule(struct replay *r, uint32_t id, uint64_t t)
{
	if (rsw_event_at(&r->q, id, t) < 0)
		r->oom = 1;
}

/* One event-log line: {"t":NS,"event":KIND,[node_key:NODE,]["port":PORT,] ...fields}. */
void rp_event(struct replay *r, uint64_t t, const char *kind, const char *node_key,
	      const char *node, const char *port, json_t *fields)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_integer((json_int_t)t));
	json_object_set_new(o, "event", json_string(kind));
	if (node_key)
		json_object_set_new(o, node_key, json_string(node));
	if (port)
		json_object_set_new(o, "port", json_string(port));
	if (fields)
		json_object_update(o, fields);
	if (r->part) /* the line's order key (replay_part.h) */
		fprintf(r->events, "%016llx%08x%08x ", (unsigned long long)r->wake_t, r->wake_id,
			r->wake_lines++);
	json_dumpf(o, r->events, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', r->events);
	json_decref(o);
	json_decref(fields);
}

void rp_event_pfc(struct replay *r, uint64_t t, const char *kind, const char *node_key,
		  const char *node, const char *port, uint8_t enable, const uint16_t time[8])
{
	json_t *f = json_object(), *a = json_array();
	json_object_set_new(f, "class_enable", json_integer(enable));
	for (unsigned i = 0; i < 8; i++)
		json_array_append_new(a, json_integer(time[i]));
	json_object_set_new(f, "time", a);
	rp_event(r, t, kind, node_key, node, port, f);
}

/* Watchdog lines from a switch's TM, which runs inside sw_settle of the switch and time there. */
static void tm_log(void *arg, const char *line)
{
	struct replay *r = arg;
	if (!r->events)
		return;
	json_t *f = json_object();
	json_object_set_new(f, "message", json_string(line));
	rp_event(r, r->settle_t, "pfcwd", r->model->zone ? "switch" : NULL, r->sw[r->settle_sw].name,
		 NULL, f);
}

/* ---- links ---- */

/* Room on link direction l's in-flight queue for one more frame: doubled when full. 0 when
 * memory ran out (m freed, the run marked out of memory). */
static int link_room(struct replay *r, struct link_dir *l, struct rte_mbuf *m)
{
	if (l->n < l->cap)
		return 1;
	size_t cap = l->cap ? l->cap * 2 : 64;
	struct in_flight *q = malloc(cap * sizeof(*q));
	if (!q) {
		r->oom = 1;
		rte_pktmbuf_free(m);
		return 0;
	}
	for (size_t i = 0; i < l->n; i++)
		q[i] = l->q[(l->head + i) % l->cap];
	free(l->q);
	l->q = q;
	l->head = 0;
	l->cap = cap;
	return 1;
}

void rp_link_send(struct replay *r, int dir, uint64_t t_start, struct rte_mbuf *m)
{
	struct link_dir *l = &r->link[dir];
	if (l->down) {
		l->lost++;
		r->res->dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!link_room(r, l, m))
		return;
	/* received whole after its serialization and the propagation; never before the frame
	 * ahead of it (captures replayed as captured may overlap on the wire) */
	flow_hop(r, *frame_flow(r, m), (uint32_t)dir, m->pkt_len);
	uint64_t t = t_start + rsw_frame_ns(m->pkt_len, l->speed_mbps) + l->delay_ns;
	if (t < l->last_t)
		t = l->last_t;
	l->last_t = t;
	if (!rp_end_here(r, &l->to)) { /* its receiver is held by another part */
		uint32_t fi = *frame_flow(r, m);
		r->part->send(r->part->arg, (unsigned)dir, t, rte_pktmbuf_mtod(m, uint8_t *),
			      m->pkt_len, fi != NO_FLOW ? &r->flows.key[fi] : NULL);
		rte_pktmbuf_free(m);
		return;
	}
	l->q[(l->head + l->n) % l->cap] = (struct in_flight){.t = t, .m = m};
	if (l->n++ == 0)
		rp_schedule(r, r->id_link + (uint32_t)dir, t);
}

void rp_link_lost(struct replay *r, int dir, uint64_t t_start, uint32_t len)
{
	/* logged when it was sent: the event log stays in time order */
	const struct link_dir *l = &r->link[dir];
	uint64_t t = t_start;
	if (!rp_end_here(r, &l->to)) { /* counted here: the far end's part never sees it */
		r->res->dropped++;
		return;
	}
	if (l->to.sw != RSW_TOPO_HOST) {
		sw_lost(r, (unsigned)l->to.sw, l->to.idx, t, len);
		return;
	}
	r->res->dropped++;
	if (r->events) {
		json_t *f = json_object();
		json_object_set_new(f, "reason", json_string(rsw_drop_reason_name(RSW_DROP_NO_MBUF)));
		rp_event(r, t, "drop", "host", r->host[l->to.idx].name, NULL, f);
	}
}

static void link_arrive(struct replay *r, unsigned dir, uint64_t t)
{
	struct link_dir *l = &r->link[dir];
	struct rte_mbuf *m = l->q[l->head].m;
	l->head = (l->head + 1) % l->cap;
	if (--l->n)
		rp_schedule(r, r->id_link + dir, l->q[l->head].t);
	if (l->to.sw == RSW_TOPO_HOST) {
		host_rx(r, l->to.idx, t, m);
	} else {
		sw_arrive(r, (unsigned)l->to.sw, l->to.idx, t, m, 0);
		sw_settle(r, (unsigned)l->to.sw, t);
	}
}

/* ---- set-up ---- */

/* Opens the capture `name` (a host, a port, or SWITCH|PORT) at path, unless the capture settings
 * leave it out. */
static int open_dump(struct replay *r, const char *name, const char *path, struct rp_cap *out,
		     char *err, size_t errlen)
{
	const struct rsw_replay_capture *cfg = r->capture;
	*out = (struct rp_cap){.cfg = cfg, .werr = &r->werr};
	if (cfg && cfg->off)
		return 0;
	if (cfg && cfg->n_only) {
		unsigned k = 0;
		while (k < cfg->n_only && fnmatch(cfg->only[k], name, 0))
			k++;
		if (k == cfg->n_only)
			return 0;
	}
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, cfg && cfg->snaplen ? (int)cfg->snaplen : 65535, PCAP_TSTAMP_PRECISION_NANO);
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the stream gets a buffer of its own, set before its first write: stdio's default (one
	 * block, 4 KiB) made a write system call of about every frame */
	FILE *fp = fopen(path, "wb");
	out->iobuf = fp ? malloc(r->capture_buffer) : NULL;
	if (out->iobuf)
		setvbuf(fp, out->iobuf, _IOFBF, r->capture_buffer);
	out->d = fp ? pcap_dump_fopen(dead, fp) : NULL;
	if (!out->d) {
		snprintf(err, errlen, "%s: %s", path, fp ? pcap_geterr(dead) : strerror(errno));
		if (fp)
			fclose(fp);
		free(out->iobuf);
		out->iobuf = NULL;
	}
	pcap_close(dead);
	out->path = out->d ? strdup(path) : NULL;
	if (out->d && !out->path) {
		pcap_dump_close(out->d);
		out->d = NULL;
		snprintf(err, errlen, "out of memory");
	}
	out->bytes = PCAP_FILE_HDR;
	return out->d ? 0 : -1;
}

/* Each capture's stream buffer: large, so that frames leave in large sequential writes, but
 * within a budget over all the files a zone may open (every port and host: 12,000 in a
 * 3,072-host zone). A buffer's pages are touched only as its file is written. */
#define CAPTURE_BUFFERS_BUDGET (256u << 20)
static size_t capture_buffer(const struct replay *r)
{
	size_t files = r->model->n_host;
	for (unsigned s = 0; s < r->model->n_sw; s++)
		files += r->sw[s].fib->n_ports;
	size_t b = CAPTURE_BUFFERS_BUDGET / (files ? files : 1);
	return b < (16u << 10) ? 16u << 10 : b > (1u << 20) ? 1u << 20 : b;
}

/* Closes a capture, adding it to what the run wrote; one that is not whole (a write failed, or
 * the run stopped at a write error) is removed, never left as if complete. */
static void close_dump(struct replay *r, struct rp_cap *c)
{
	if (!c->d)
		return;
	FILE *f = pcap_dump_file(c->d);
	/* no fsync: local file systems (ext4, xfs, tmpfs) refuse a write that has no room */
	int bad = fflush(f) != 0 || ferror(f);
	if (bad && !r->werr.err) {
		r->werr.err = errno ? errno : EIO;
		snprintf(r->werr.path, sizeof(r->werr.path), "%s", c->path);
	}
	pcap_dump_close(c->d);
	c->d = NULL;
	free(c->iobuf);
	c->iobuf = NULL;
	if (bad || r->werr.err) {
		unlink(c->path);
		r->werr_removed++;
	} else if (r->capture) {
		r->capture->files++;
		r->capture->bytes += c->bytes;
	}
	free(c->path);
	c->path = NULL;
}

static int make_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_cap(struct cap_in *in, const char *path, char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE];
	in->path = path;
	in->p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!in->p) {
		snprintf(err, errlen, "%s: %s", path, perr);
		return -1;
	}
	if (pcap_datalink(in->p) != DLT_EN10MB) {
		snprintf(err, errlen, "%s: not an Ethernet capture", path);
		return -1;
	}
	return 0;
}

static int open_outputs(struct replay *r, const char *dir, char *err, size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	char path[4096];
	if (make_dir(dir, err, errlen) < 0)
		return -1;
	r->capture_buffer = capture_buffer(r);
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		if (!rp_sw_here(r, s)) /* its part writes its captures */
			continue;
		if (md->zone && !(r->capture && r->capture->off)) {
			snprintf(path, sizeof(path), "%s/%s", dir, n->name);
			if (make_dir(path, err, errlen) < 0)
				return -1;
		}
		for (uint16_t p = 0; p < n->fib->n_ports; p++) {
			char name[256];
			const char *port = n->fib->ports[p].name;
			if (md->zone) {
				snprintf(path, sizeof(path), "%s/%s/%s.pcap", dir, n->name, port);
				snprintf(name, sizeof(name), "%s|%s", n->name, port);
			} else {
				snprintf(path, sizeof(path), "%s/%s.pcap", dir, port);
				snprintf(name, sizeof(name), "%s", port);
			}
			if (open_dump(r, name, path, &n->out[p], err, errlen) < 0)
				return -1;
			n->capturing |= n->out[p].d != NULL;
		}
	}
	for (unsigned h = 0; h < md->n_host; h++) {
		if (!rp_host_here(r, h))
			continue;
		snprintf(path, sizeof(path), "%s/%s.pcap", dir, r->host[h].name);
		if (open_dump(r, r->host[h].name, path, &r->host[h].out, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Nodes, links and the agenda's entity ids. */
static int build(struct replay *r, char *err, size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	r->sw = calloc(md->n_sw ? md->n_sw : 1, sizeof(*r->sw));
	r->host = calloc(md->n_host ? md->n_host : 1, sizeof(*r->host));
	r->link = calloc(md->n_link ? 2 * md->n_link : 1, sizeof(*r->link));
	r->in = calloc(md->n_in ? md->n_in : 1, sizeof(*r->in));
	r->res->sw = calloc(md->n_sw ? md->n_sw : 1, sizeof(*r->res->sw));
	r->res->host = calloc(md->n_host ? md->n_host : 1, sizeof(*r->res->host));
	/* the switches' flow cache: one for all (the tables' identity is in its key) */
	r->decided = rsw_flow_cache_wanted() ? rsw_flow_cache_new(REPLAY_FLOW_CACHE) : NULL;
	if (!r->sw || !r->host || !r->link || !r->in || !r->res->sw || !r->res->host ||
	    (rsw_flow_cache_wanted() && !r->decided))
		goto oom;
	r->id_host = md->n_in;
	r->id_link = r->id_host + md->n_host;
	r->id_port = r->id_link + 2 * md->n_link;
	r->id_ctrl = r->id_port + md->n_sw * RSW_MAX_PORTS;
	r->id_fault = r->id_ctrl + md->n_sw * RSW_MAX_PORTS;
	if (rsw_event_heap_init(&r->q, r->id_fault + 1) < 0)
		goto oom;
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		n->name = md->sw[s].name;
		n->fib = rsw_switch_fib(md->sw[s].sw);
		n->ictx.rnd = 0x9E3779B97F4A7C15ull;
		n->ictx.cache = r->decided;
		n->res = &r->res->sw[s];
		for (unsigned p = 0; p < RSW_MAX_PORTS; p++)
			n->tx_link[p] = -1;
	}
	for (unsigned h = 0; h < md->n_host; h++) {
		struct host_node *hn = &r->host[h];
		hn->name = md->host[h].name;
		hn->tx_link = -1;
		hn->att_sw = -1;
		hn->res = &r->res->host[h];
	}
	for (unsigned i = 0; i < md->n_link; i++) {
		const struct rsw_topo_link *lk = &md->link[i];
		const struct rsw_topo_end *from[2] = {&lk->a, &lk->b}, *to[2] = {&lk->b, &lk->a};
		for (unsigned d = 0; d < 2; d++) {
			struct link_dir *l = &r->link[2 * i + d];
			l->to = *to[d];
			l->speed_mbps = lk->speed_mbps;
			l->delay_ns = lk->delay_ns;
			if (from[d]->sw == RSW_TOPO_HOST) {
				struct host_node *hn = &r->host[from[d]->idx];
				hn->tx_link = (int)(2 * i + d);
				hn->speed_mbps = lk->speed_mbps;
				if (to[d]->sw != RSW_TOPO_HOST) {
					hn->att_sw = to[d]->sw;
					hn->att_port = to[d]->idx;
				}
			} else {
				r->sw[from[d]->sw].tx_link[from[d]->idx] = (int)(2 * i + d);
			}
		}
	}
	for (unsigned h = 0; h < md->n_host; h++) {
		struct host_node *hn = &r->host[h];
		rsw_shaper_init(&hn->shaper, hn->speed_mbps, 0);
		if (md->host[h].pcap) {
			if (open_cap(&hn->in, md->host[h].pcap, err, errlen) < 0)
				return -1;
			hn->has_in = 1;
		}
	}
	for (unsigned i = 0; i < md->n_in; i++)
		if (open_cap(&r->in[i], md->in[i].path, err, errlen) < 0)
			return -1;
	static const struct rte_mbuf_dynfield flow_field = {
		.name = "rsw_replay_flow", .size = sizeof(uint32_t), .align = __alignof__(uint32_t)};
	r->flow_field = rte_mbuf_dynfield_register(&flow_field);
	if (r->flow_field < 0 || !add_pool(r, 0)) {
		snprintf(err, errlen, "cannot create the packet pool");
		return -1;
	}
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		/* events are in ns, the shaper in ps: a 1 ns slack lets a busy port start its next
		 * frame at the exact ps its wire freed instead of the ns rounded up */
		n->tm = rsw_tm_new_growing(n->fib->n_ports, &n->fib->tm, 1, err, errlen);
		if (!n->tm)
			return -1;
		n->tm->log = tm_log;
		n->tm->flushed = sw_flushed;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void rsw_replay_result_free(struct rsw_replay_result *res, unsigned n_sw)
{
	for (unsigned s = 0; res->sw && s < n_sw; s++)
		rsw_tm_free(res->sw[s].tm);
	free(res->sw);
	free(res->host);
	free(res->flow_key);
	for (size_t i = 0; res->flow && i < res->n_flows; i++)
		free(res->flow[i].hop);
	free(res->flow);
	if (res->coll) {
		free(res->coll->qp);
		free(res->coll->step_done_ns);
	}
	free(res->coll);
	free(res->link_lost);
	for (unsigned i = 0; i < res->n_deadlock; i++) {
		free(res->deadlock[i].member);
		free(res->deadlock[i].flow);
	}
	free(res->deadlock);
	memset(res, 0, sizeof(*res));
}

static void finish(struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	struct rsw_replay_result *res = r->res;
	rp_deadlock_check(r, res->cut_ns ? res->cut_ns : res->end_ns); /* held to the end? */
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		n->res->queued = rsw_tm_queued(n->tm);
		res->queued += n->res->queued;
		/* the watchdog's flushed packets were dropped as they were flushed (sw_flushed) */
		n->tm->log = NULL; /* its argument lives on the run's stack */
		n->tm->flushed = NULL;
		n->res->tm = n->tm;
		n->tm = NULL;
	}
	for (unsigned i = 0; i < 2 * md->n_link; i++)
		res->in_flight += r->link[i].n;
	if (md->n_fault) {
		res->link_lost = calloc(2 * md->n_link + 1, sizeof(*res->link_lost));
		for (unsigned i = 0; res->link_lost && i < 2 * md->n_link; i++)
			res->link_lost[i] = r->link[i].lost;
	}
	for (unsigned h = 0; h < md->n_host; h++)
		host_finish(r, h, res->cut_ns ? res->cut_ns : res->end_ns);
	if (r->loop)
		loop_finish(r);
	res->n_flows = r->flows.n;
	res->flow_key = r->flows.key;
	res->flow = r->fl;
	r->flows.key = NULL;
	r->fl = NULL;
}

static void cleanup(struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	for (unsigned i = 0; r->in && i < md->n_in; i++)
		if (r->in[i].p)
			pcap_close(r->in[i].p);
	for (unsigned h = 0; r->host && h < md->n_host; h++) {
		if (r->host[h].in.p)
			pcap_close(r->host[h].in.p);
		close_dump(r, &r->host[h].out);
		host_free_pending(&r->host[h]);
	}
	for (unsigned s = 0; r->sw && s < md->n_sw; s++) {
		for (uint16_t p = 0; p < RSW_MAX_PORTS; p++)
			close_dump(r, &r->sw[s].out[p]);
		rsw_tm_free(r->sw[s].tm);
	}
	for (unsigned i = 0; r->link && i < 2 * md->n_link; i++) {
		struct link_dir *l = &r->link[i];
		for (size_t k = 0; k < l->n; k++)
			rte_pktmbuf_free(l->q[(l->head + k) % l->cap].m);
		free(l->q);
	}
	loop_free(r);
	rp_deadlock_free(r);
	rsw_event_heap_free(&r->q);
	/* (on success finish() handed the flows to the result and r->fl is NULL) */
	for (size_t i = 0; r->fl && i < r->flows.n; i++)
		free(r->fl[i].hop);
	rsw_flow_table_free(&r->flows);
	free(r->fl);
	free(r->in);
	free(r->sw);
	rsw_flow_cache_free(r->decided);
	free(r->host);
	free(r->link);
	/* the pools stay: the TMs handed back to the caller may still hold their packets */
	for (unsigned c = 0; c < REPLAY_MEM_CLASSES; c++)
		free(r->mem[c].pool);
}

/* ---- the run ---- */

static void dispatch(struct replay *r, const struct rsw_wake *w)
{
	const struct rsw_replay_model *md = r->model;
	uint64_t t = w->t;
	uint32_t id = w->id;
	if (id < r->id_host) {
		struct cap_in *in = &r->in[id];
		unsigned s = md->in[id].sw;
		struct rte_mbuf *m = rp_mbuf(r, in->data, in->len, NO_FLOW, 0);
		r->res->entered++;
		if (m)
			sw_arrive(r, s, md->in[id].port, t, m, 1);
		else
			sw_lost(r, s, md->in[id].port, t, in->len);
		rp_cap_next(r, in);
		if (!in->eof) /* time never goes back, even if a capture does */
			rp_schedule(r, id, in->t > t ? in->t : t);
		sw_settle(r, s, t);
	} else if (id < r->id_link) {
		host_wake(r, id - r->id_host, t);
	} else if (id < r->id_port) {
		link_arrive(r, id - r->id_link, t);
	} else if (id < r->id_ctrl) {
		unsigned s = (id - r->id_port) / RSW_MAX_PORTS, p = (id - r->id_port) % RSW_MAX_PORTS;
		sw_service(r, s, (uint16_t)p, t);
		sw_settle(r, s, t);
	} else if (id == r->id_fault) {
		rp_fault_due(r, t);
	} else {
		unsigned s = (id - r->id_ctrl) / RSW_MAX_PORTS, p = (id - r->id_ctrl) % RSW_MAX_PORTS;
		rp_ports_add(&r->sw[s].dirty_ctrl, p);
		sw_settle(r, s, t);
	}
}

/* For a person watching a long run: virtual time reached, switch-hops a wall second, and with
 * --until the time left at the rate so far. */
static void progress_line(const struct replay *r, const struct rsw_replay_opts *opts, uint64_t t,
			  double wall_s)
{
	uint64_t hops = 0;
	for (unsigned s = 0; s < r->model->n_sw; s++)
		hops += r->res->sw[s].received;
	/* three significant digits: a first line on a loaded machine may come at a few thousand
	 * hops a second, which two decimals of millions would show as 0.00 */
	fprintf(opts->progress, "\rreplay: %.6f s virtual, %.3g M switch-hops/s, %lu frames in, "
		"%lu delivered", (double)t / 1e9, wall_s > 0 ? (double)hops / wall_s / 1e6 : 0.0,
		(unsigned long)r->res->entered,
		(unsigned long)(r->res->delivered + r->res->left));
	if (opts->until_ns && t > r->res->start_ns && wall_s > 0) {
		double left = (double)(opts->until_ns - t) * wall_s / (double)(t - r->res->start_ns);
		fprintf(opts->progress, ", about %.0f s to --until", left);
	}
	fprintf(opts->progress, "   ");
	fflush(opts->progress);
}

/* The --capture-filter expression, compiled by libpcap as tcpdump would. */
static int compile_filter(struct rsw_replay_capture *c, char *err, size_t errlen)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (!dead) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = pcap_compile(dead, &c->prog, c->filter, 1, PCAP_NETMASK_UNKNOWN);
	if (rc < 0)
		snprintf(err, errlen, "capture filter '%s': %s", c->filter, pcap_geterr(dead));
	pcap_close(dead);
	return rc;
}

struct replay *rsw_replay_part_open(const struct rsw_replay_model *model, const char *out_dir,
				    const struct rsw_replay_opts *opts,
				    const struct rsw_replay_part *part,
				    struct rsw_replay_result *res, char *err, size_t errlen)
{
	struct replay *r = calloc(1, sizeof(*r));
	memset(res, 0, sizeof(*res));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	*r = (struct replay){.model = model, .res = res, .events = opts->events,
			     .sample_ns = opts->sample_ns, .err = err, .errlen = errlen,
			     .last_flow = NO_FLOW, .capture = opts->capture, .part = part,
			     .trace = opts->trace, .opts = opts};
	res->deadlock_hold_ns = opts->deadlock_ns ? opts->deadlock_ns : RSW_REPLAY_DEADLOCK_NS;
	if (r->capture) {
		r->capture->files = 0;
		r->capture->bytes = 0;
		if (r->capture->filter && compile_filter(r->capture, err, errlen) < 0) {
			free(r);
			return NULL;
		}
	}
	if (build(r, err, errlen) < 0 || open_outputs(r, out_dir, err, errlen) < 0)
		goto fail;
	for (unsigned s = 0; s < model->n_sw; s++)
		r->sw[s].tm->log_arg = r;
	for (unsigned i = 0; i < model->n_in; i++) {
		if (!rp_sw_here(r, model->in[i].sw))
			continue;
		rp_cap_next(r, &r->in[i]);
		if (!r->in[i].eof)
			rp_schedule(r, i, r->in[i].t);
	}
	if (model->coll) {
		if (loop_init(r, err, errlen) < 0)
			goto fail;
		loop_start(r);
	}
	rp_fault_start(r);
	for (unsigned h = 0; h < model->n_host; h++) {
		struct host_node *hn = &r->host[h];
		if (!hn->has_in || model->coll || !rp_host_here(r, h))
			continue;
		rp_cap_next(r, &hn->in);
		if (!hn->in.eof)
			rp_schedule(r, r->id_host + h, hn->in.t);
	}
	return r;
fail:
	rsw_replay_part_close(r, 0, 0);
	return NULL;
}

uint64_t rsw_replay_part_next(const struct replay *r)
{
	return rsw_event_peek(&r->q);
}

/* Runs the next wake-up. */
static void run_one(struct replay *r)
{
	struct rsw_wake w;
	rsw_event_pop(&r->q, &w);
	if (!r->res->entered && !r->res->generated)
		r->res->start_ns = w.t;
	r->wake_t = w.t;
	r->wake_id = w.id;
	r->wake_lines = 0;
	r->wake_n = 0;
	dispatch(r, &w);
	if (r->events && r->sample_ns && w.t >= r->next_sample) {
		for (unsigned s = 0; s < r->model->n_sw; s++)
			sw_sample(r, s, w.t);
		r->next_sample = w.t - w.t % r->sample_ns + r->sample_ns;
	}
	r->n_events++;
}

static int run_failed(const struct replay *r)
{
	return r->failed || r->oom || r->werr.err;
}

int rsw_replay_part_run_at(struct replay *r, uint64_t t)
{
	while (!run_failed(r) && rsw_event_peek(&r->q) == t)
		run_one(r);
	return run_failed(r) ? -1 : 0;
}

void rsw_replay_part_deliver(struct replay *r, unsigned dir, uint64_t t, const uint8_t *data,
			     uint32_t len, const struct rsw_flow_key *flow)
{
	uint32_t fi = NO_FLOW;
	if (flow) {
		long f = rsw_flow_table_find_add(&r->flows, flow);
		if (f >= 0 && (size_t)f >= r->fl_cap) {
			size_t cap = r->fl_cap ? r->fl_cap * 2 : 1024;
			void *p = realloc(r->fl, cap * sizeof(*r->fl));
			if (p) {
				r->fl = p;
				memset(r->fl + r->fl_cap, 0, (cap - r->fl_cap) * sizeof(*r->fl));
				r->fl_cap = cap;
			} else {
				f = -1;
			}
		}
		if (f < 0)
			r->oom = 1;
		else
			fi = (uint32_t)f;
	}
	struct rte_mbuf *m = rp_mbuf(r, data, len, fi, 0);
	struct link_dir *l = &r->link[dir];
	if (!m) {
		rp_link_lost(r, (int)dir, t, len);
		return;
	}
	if (!link_room(r, l, m))
		return;
	l->q[(l->head + l->n) % l->cap] = (struct in_flight){.t = t, .m = m};
	if (l->n++ == 0)
		rp_schedule(r, r->id_link + dir, t);
}

int rsw_replay_part_close(struct replay *r, uint64_t cut_ns, int ok)
{
	struct rsw_replay_result *res = r->res;
	const struct rsw_replay_model *model = r->model;
	char *err = r->err;
	size_t errlen = r->errlen;
	int rc = -1, finished = 0;
	res->cut_ns = cut_ns;
	if (r->oom)
		snprintf(err, errlen, "out of memory");
	if (ok && !run_failed(r)) {
		finish(r); /* hands each switch's traffic manager to res */
		finished = 1;
		rc = 0;
	}
	cleanup(r);
	if (r->werr.err && !r->failed && !r->oom) {
		snprintf(err, errlen, "cannot write %s: %s (%u incomplete captures removed)",
			 r->werr.path, strerror(r->werr.err), r->werr_removed);
		rc = -1;
	}
	if (r->capture && r->capture->filter)
		pcap_freecode(&r->capture->prog);
	if (rc < 0) /* a capture found incomplete only at its close fails a finished run */
		rsw_replay_result_free(res, finished ? model->n_sw : 0);
	free(r);
	return rc;
}

int rsw_replay_run(const struct rsw_replay_model *model, const char *out_dir,
		   const struct rsw_replay_opts *opts, struct rsw_replay_result *res, char *err,
		   size_t errlen)
{
	struct replay *r = rsw_replay_part_open(model, out_dir, opts, NULL, res, err, errlen);
	if (!r)
		return -1;
	struct timespec t0, now_ts;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	time_t last_progress = 0; /* the first line after 4096 events, then once a second */
	int progressed = 0;
	uint64_t cut = 0;
	while (!run_failed(r) && rsw_event_peek(&r->q) != UINT64_MAX) {
		if (opts->until_ns && rsw_event_peek(&r->q) > opts->until_ns) {
			cut = opts->until_ns;
			break;
		}
		run_one(r);
		if (opts->progress && !(r->n_events & 4095) && time(NULL) != last_progress) {
			last_progress = time(NULL);
			progressed = 1;
			clock_gettime(CLOCK_MONOTONIC, &now_ts);
			progress_line(r, opts, r->wake_t, (double)(now_ts.tv_sec - t0.tv_sec) +
				      (double)(now_ts.tv_nsec - t0.tv_nsec) / 1e9);
		}
	}
	if (progressed)
		fprintf(opts->progress, "\n");
	return rsw_replay_part_close(r, cut, 1);
}
