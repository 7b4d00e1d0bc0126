/* A replay run: the nodes built from the model and wired to the engine (its ops), the outputs
 * opened, the agenda run to its end or to --until (or driven from outside, a part of a zone at a
 * time: replay_part.h), and the results handed to the caller. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/tm/tm.h"
#include "replay_coll.h"
#include "replay_deadlock.h"
#include "replay_engine.h"
#include "replay_fault.h"
#include "replay_host.h"
#include "replay_node.h"
#include "replay_player.h"
#include "replay_switch.h"

/* flows decided, all switches together: 1 MiB to begin with, growing as (switch, flow) pairs
 * outnumber its slots (a ring over 3,072 hosts: 18,432) up to 32 MiB */
#define REPLAY_FLOW_CACHE 8192u
#define REPLAY_FLOW_CACHE_MAX (1u << 18)

/* What the engine runs at each kind of wake-up. */
static const struct rp_node_ops node_ops = {
	.sw_rx = rp_sw_rx,
	.sw_input = rp_sw_input,
	.sw_lost = rp_sw_lost,
	.sw_tx = rp_sw_tx,
	.sw_ctrl = rp_sw_ctrl,
	.sw_sample_all = rp_sw_sample,
	.deadlock = rp_deadlock_check,
	.host_rx = rp_host_rx,
	.host_lost = rp_host_lost,
	.due = rp_fault_due,
	.sw_rx_ahead = rp_sw_rx_ahead,
	.sw_tx_ahead = rp_sw_tx_ahead,
};

/* ---- outputs ---- */

static int make_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The captures of switch s's ports: DIR/<port>.pcap, in a zone DIR/<switch>/<port>.pcap. */
static int open_switch_outputs(struct replay *r, unsigned s, const char *dir, char *err,
			       size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	struct sw_node *n = &r->sw[s];
	char path[4096];
	if (md->zone && !(r->cap.cfg && r->cap.cfg->off)) {
		snprintf(path, sizeof(path), "%s/%s", dir, n->name);
		if (make_dir(path, err, errlen) < 0)
			return -1;
	}
	if (r->cap.cfg && r->cap.cfg->off)
		return 0;
	n->out = calloc(n->fib->n_ports ? n->fib->n_ports : 1, sizeof(*n->out));
	if (!n->out) {
		snprintf(err, errlen, "out of memory");
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
		if (rp_capture_open(&r->cap, name, path, &n->out[p], err, errlen) < 0)
			return -1;
		n->capturing |= n->out[p].d != NULL;
	}
	if (!n->capturing) { /* every port left out (--capture-only) */
		free(n->out);
		n->out = NULL;
	}
	return 0;
}

static int open_outputs(struct replay *r, const char *dir, char *err, size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	char path[4096];
	if (make_dir(dir, err, errlen) < 0)
		return -1;
	size_t files = md->n_host;
	for (unsigned s = 0; s < md->n_sw; s++)
		files += r->sw[s].fib->n_ports;
	r->cap.buffer = rp_capture_buffer(files);
	for (unsigned s = 0; s < md->n_sw; s++)
		if (rp_sw_here(r, s) && /* else its part writes its captures */
		    open_switch_outputs(r, s, dir, err, errlen) < 0)
			return -1;
	for (unsigned h = 0; h < md->n_host; h++) {
		if (!rp_host_here(r, h))
			continue;
		snprintf(path, sizeof(path), "%s/%s.pcap", dir, r->host[h].name);
		if (rp_capture_open(&r->cap, r->host[h].name, path, &r->host[h].out, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* ---- set-up ---- */

/* The nodes' and links' arrays, the results' and the switches' flow cache. */
static int alloc_nodes(struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	r->sw = rp_zalloc_lines((md->n_sw ? md->n_sw : 1) * sizeof(*r->sw));
	r->host = rp_zalloc_lines((md->n_host ? md->n_host : 1) * sizeof(*r->host));
	size_t link_bytes = (md->n_link ? 2 * md->n_link : 1) * sizeof(*r->link);
	r->link = rp_zalloc_lines(link_bytes); /* a line each */
	r->in = calloc(md->n_in ? md->n_in : 1, sizeof(*r->in));
	/* a port's counters in one line */
	r->res->sw = rp_zalloc_lines((md->n_sw ? md->n_sw : 1) * sizeof(*r->res->sw));
	r->res->host = calloc(md->n_host ? md->n_host : 1, sizeof(*r->res->host));
	/* the switches' flow cache: one for all (the tables' identity is in its key) */
	r->decided = rsw_flow_cache_wanted() ? rsw_flow_cache_new(REPLAY_FLOW_CACHE) : NULL;
	if (r->decided)
		rsw_flow_cache_grow_upto(r->decided, REPLAY_FLOW_CACHE_MAX);
	if (!r->sw || !r->host || !r->link || !r->in || !r->res->sw || !r->res->host ||
	    (rsw_flow_cache_wanted() && !r->decided))
		return -1;
	size_t ports = 0;
	for (unsigned s = 0; s < md->n_sw; s++)
		ports += rsw_switch_fib(md->sw[s].sw)->n_ports;
	r->sw_port = rp_zalloc_lines((ports ? ports : 1) * sizeof(*r->sw_port));
	if (!r->sw_port)
		return -1;
	ports = 0;
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		n->name = md->sw[s].name;
		if (rp_sw_tables(r, s, rsw_switch_fib(md->sw[s].sw)) < 0)
			return -1;
		n->ictx.rnd = 0x9E3779B97F4A7C15ull;
		n->ictx.cache = r->decided;
		n->res = &r->res->sw[s];
		n->port = &r->sw_port[ports];
		for (unsigned p = 0; p < n->fib->n_ports; p++) {
			n->port[p].tx_link = -1;
			n->port[p].rx_hint.egress = UINT16_MAX;
		}
		ports += n->fib->n_ports;
	}
	for (unsigned h = 0; h < md->n_host; h++) {
		struct host_node *hn = &r->host[h];
		hn->name = md->host[h].name;
		hn->tx_link = -1;
		hn->att_sw = -1;
		hn->res = &r->res->host[h];
	}
	return 0;
}

/* Each link's two directions, and the port or host each starts from. */
static void wire_links(struct replay *r)
{
	const struct rsw_replay_model *md = r->model;
	for (unsigned i = 0; i < md->n_link; i++) {
		const struct rsw_topo_link *lk = &md->link[i];
		const struct rsw_topo_end *from[2] = {&lk->a, &lk->b}, *to[2] = {&lk->b, &lk->a};
		for (unsigned d = 0; d < 2; d++) {
			struct link_dir *l = &r->link[2 * i + d];
			l->to = *to[d];
			l->speed_mbps = lk->speed_mbps;
			l->delay_ns = lk->delay_ns;
			if (from[d]->sw != RSW_TOPO_HOST) {
				r->sw[from[d]->sw].port[from[d]->idx].tx_link = (int)(2 * i + d);
				continue;
			}
			struct host_node *hn = &r->host[from[d]->idx];
			hn->tx_link = (int)(2 * i + d);
			hn->speed_mbps = lk->speed_mbps;
			if (to[d]->sw != RSW_TOPO_HOST) {
				hn->att_sw = to[d]->sw;
				hn->att_port = to[d]->idx;
			}
		}
	}
}

/* Whether the hosts' frames may leave their bytes past the headers in the hosts' captures,
 * mapped: when captures keep more of a frame than the switches read (whole, by default), packet
 * memory holds each frame in flight whole, and past the buffers it started with, each a page of
 * fresh memory at 4 KiB, where the bytes already lie in the file's pages (docs/replay.md,
 * "Limits"). Not for a filter or a trace, which read a frame in one piece. */
static int rest_in_captures(const struct replay *r)
{
	const struct rsw_replay_capture *c = r->opts->capture;
	return !r->model->coll && !r->trace && !(c && c->filter) && r->read_to > RP_BUILT_HEAD;
}

/* The hosts' and the direct inputs' captures. */
static int open_inputs(struct replay *r, char *err, size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	int mapped = rest_in_captures(r);
	/* ROCESW_PAYLOAD_IN_CAPTURE=1: every such frame's payload stays there (to compare) */
	const char *v = getenv("ROCESW_PAYLOAD_IN_CAPTURE");
	r->mem.first_pool_off = v && !strcmp(v, "1");
	if (mapped && r->part && !(r->linear = malloc(RP_FRAME_MAX))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned h = 0; h < md->n_host; h++) {
		struct host_node *hn = &r->host[h];
		rsw_shaper_init(&hn->shaper, hn->speed_mbps, 0);
		if (md->host[h].pcap) {
			if (rp_cap_open(&hn->in, md->host[h].pcap, err, errlen) < 0)
				return -1;
			if (mapped)
				rp_cap_map(&hn->in); /* else its frames are held whole */
			hn->has_in = 1;
		}
	}
	for (unsigned i = 0; i < md->n_in; i++)
		if (rp_cap_open(&r->in[i], md->in[i].path, err, errlen) < 0)
			return -1;
	return 0;
}

/* Whether the run reads ahead (replay_engine.c): when the records the zone's ports are read
 * by (their TM's, a few KB a port) are more than the core's L2 holds, so that a switch's are
 * gone by its next wake-up; a small zone's stay near the core and reading ahead would be
 * instructions for nothing. ROCESW_READ_AHEAD=on or off decides instead (to compare). */
static int read_ahead_pays(const struct replay *r)
{
	const char *v = getenv("ROCESW_READ_AHEAD");
	if (v && (!strcmp(v, "on") || !strcmp(v, "1")))
		return 1;
	if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
		return 0;
	size_t ports = 0;
	for (unsigned s = 0; s < r->model->n_sw; s++)
		ports += r->sw[s].fib->n_ports;
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	return ports * sizeof(struct rsw_tm_port) > (size_t)(l2 > 0 ? l2 : 1 << 20);
}

/* Whether malloc puts its heap on transparent huge pages (glibc's tunable glibc.malloc.hugetlb=1,
 * which `rocesw replay` sets for itself: control/cli/huge_heap.c): packet memory follows, so
 * that ROCESW_HUGE_HEAP=0 or the user's own tunable decides for both. Packet memory is touched
 * as frames fill it: a fault a 4 KiB page was 15 % of the CPU of a deep 4:1 zone's replay. */
static int malloc_on_huge_pages(void)
{
	static const char k[] = "glibc.malloc.hugetlb=";
	const char *t = getenv("GLIBC_TUNABLES"), *v = t ? strstr(t, k) : NULL;
	if (!v)
		return 0;
	v += sizeof(k) - 1;
	return v[0] == '1' && (v[1] == '\0' || v[1] == ':');
}

/* Nodes, links, the agenda and packet memory. */
static int build(struct replay *r, char *err, size_t errlen)
{
	const struct rsw_replay_model *md = r->model;
	if (alloc_nodes(r) < 0 || rp_engine_init(r) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	wire_links(r);
	r->mem.huge = malloc_on_huge_pages();
	if (rp_mem_init(&r->mem) < 0) {
		snprintf(err, errlen, "cannot create the packet pool");
		return -1;
	}
	if (open_inputs(r, err, errlen) < 0)
		return -1;
	/* one region for every switch's TM port records: those the traffic reaches lie together */
	size_t ports = 0;
	for (unsigned s = 0; s < md->n_sw; s++)
		ports += r->sw[s].fib->n_ports;
	struct rsw_tm_region *region = rsw_tm_region_new(ports);
	if (!region) {
		snprintf(err, errlen, "out of memory for the traffic managers");
		return -1;
	}
	int made = 1;
	for (unsigned s = 0; made && s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		/* events are in ns, the shaper in ps: a 1 ns slack lets a busy port start its next
		 * frame at the exact ps its wire freed instead of the ns rounded up */
		n->tm = rsw_tm_new_growing(n->fib->n_ports, &n->fib->tm, 1, region, err, errlen);
		made = n->tm != NULL;
		if (made) {
			n->tm->log = rp_sw_tm_log;
			n->tm->flushed = rp_sw_flushed;
		}
	}
	rsw_tm_region_put(region); /* the TMs hold it */
	if (!made)
		return -1;
	r->read_ahead = read_ahead_pays(r);
	r->ops = &node_ops;
	r->host_ops = md->coll ? &rp_coll_ops : &rp_player_ops;
	return 0;
}

/* ---- results ---- */

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
	if (!r->part) { /* (a part's carrier ends its grid: replay_part.h) */
		/* a cut run's grid runs to the cut, past its last wake-up; held to the end? */
		while (res->cut_ns && r->dl_next_ns <= res->cut_ns && !r->oom)
			rp_engine_grid_at(r, r->dl_next_ns, r->dl_armed, res->cut_ns, 0);
		rsw_replay_part_dl_end(r, res->cut_ns ? res->cut_ns : res->end_ns);
	}
	for (unsigned s = 0; s < md->n_sw; s++) {
		struct sw_node *n = &r->sw[s];
		rp_sw_fold(r, s);
		n->res->queued = rsw_tm_queued(n->tm);
		res->queued += n->res->queued;
		/* the watchdog's flushed packets were dropped as they were flushed (rp_sw_flushed) */
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
		rp_host_finish(r, h, res->cut_ns ? res->cut_ns : res->end_ns);
	if (r->coll)
		rp_coll_finish(r);
	rp_flows_fold(r);
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
		rp_cap_close(&r->in[i]);
	for (unsigned h = 0; r->host && h < md->n_host; h++) {
		rp_cap_close(&r->host[h].in);
		rp_capture_close(&r->cap, &r->host[h].out);
		rp_host_free_pending(&r->host[h]);
	}
	for (unsigned s = 0; r->sw && s < md->n_sw; s++) {
		for (uint16_t p = 0; r->sw[s].out && p < r->sw[s].fib->n_ports; p++)
			rp_capture_close(&r->cap, &r->sw[s].out[p]);
		free(r->sw[s].out);
		rsw_tm_free(r->sw[s].tm);
	}
	rp_log_close(&r->log);
	rp_coll_free(r);
	rp_deadlock_free(r);
	rp_engine_free(r);
	free(r->in);
	free(r->sw);
	free(r->sw_port);
	rp_sw_tables_free(r);
	rsw_flow_cache_free(r->decided);
	free(r->host);
	free(r->linear);
	/* the pools stay: the TMs handed back to the caller may still hold their packets */
	rp_mem_free(&r->mem);
}

/* ---- the run ---- */

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

/* The first wake-ups: each input's and host's first frame, the collective, the failures. */
static int start(struct replay *r, char *err, size_t errlen)
{
	const struct rsw_replay_model *model = r->model;
	for (unsigned i = 0; i < model->n_in; i++) {
		if (!rp_sw_here(r, model->in[i].sw))
			continue;
		rp_cap_next(r, &r->in[i]);
		if (!r->in[i].eof)
			rp_schedule(r, i, r->in[i].t);
	}
	if (model->coll) {
		if (rp_coll_init(r, err, errlen) < 0)
			return -1;
		rp_coll_start(r);
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
	rp_log_flush(&r->log); /* what the start logged comes first */
	return 0;
}

/* How far into a frame the captures and traces read (replay_engine.h). A capture filter or a
 * trace may test any byte of it. */
static uint32_t frame_read_to(const struct rsw_replay_opts *opts)
{
	const struct rsw_replay_capture *c = opts->capture;
	if (opts->trace || !c || c->filter)
		return UINT32_MAX;
	return c->off ? 0 : c->snaplen ? c->snaplen : UINT32_MAX;
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
	*r = (struct replay){.model = model, .res = res,
			     .log = {.f = opts->events, .keyed = part != NULL},
			     .sample_ns = opts->sample_ns, .err = err, .errlen = errlen,
			     .last_flow = NO_FLOW, .part = part, .trace = opts->trace, .opts = opts,
			     .read_to = frame_read_to(opts)};
	res->deadlock_hold_ns = opts->deadlock_ns ? opts->deadlock_ns : RSW_REPLAY_DEADLOCK_NS;
	r->dl_step_ns = res->deadlock_hold_ns / 8 ? res->deadlock_hold_ns / 8 : 1;
	r->dl_next_ns = r->dl_step_ns;
	res->queue_sample_ns = opts->events ? opts->sample_ns : 0;
	if (rp_captures_init(&r->cap, opts->capture, err, errlen) < 0) {
		free(r);
		return NULL;
	}
	if (build(r, err, errlen) < 0 || open_outputs(r, out_dir, err, errlen) < 0)
		goto fail;
	for (unsigned s = 0; s < model->n_sw; s++)
		r->sw[s].tm->log_arg = r;
	if (start(r, err, errlen) < 0)
		goto fail;
	return r;
fail:
	rsw_replay_part_close(r, 0, 0);
	return NULL;
}

int rsw_replay_part_dl_end(struct replay *r, uint64_t end)
{
	rp_log_end(&r->log);
	rp_deadlock_check(r, end);
	return r->oom ? -1 : 0;
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
	if (ok && !rp_engine_failed(r)) {
		finish(r); /* hands each switch's traffic manager to res */
		finished = 1;
		rc = 0;
	}
	cleanup(r);
	if (r->cap.werr.err && !r->failed && !r->oom) {
		snprintf(err, errlen, "cannot write %s: %s (%u incomplete captures removed)",
			 r->cap.werr.path, strerror(r->cap.werr.err), r->cap.removed);
		rc = -1;
	}
	rp_captures_done(&r->cap);
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
	if (opts->setup_cpu) {
		struct timespec cpu;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		fprintf(opts->setup_cpu, "replay: set-up %.6f s of CPU (user + system)\n",
			(double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
		fprintf(opts->setup_cpu, "replay: reading ahead %s\n", r->read_ahead ? "on" : "off");
	}
	struct timespec t0, now_ts;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	time_t last_progress = 0; /* the first line after 4096 events, then once a second */
	int progressed = 0;
	uint64_t cut = 0;
	while (!rp_engine_failed(r) && rsw_event_peek(&r->q) != UINT64_MAX) {
		if (opts->until_ns && rsw_event_peek(&r->q) > opts->until_ns) {
			cut = opts->until_ns;
			break;
		}
		rp_engine_run_one(r);
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
	if (opts->setup_cpu) { /* the event loop's own, without the outputs written after it */
		struct timespec cpu;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
		fprintf(opts->setup_cpu, "replay: event loop ends at %.6f s of CPU, %llu events\n",
			(double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9,
			(unsigned long long)r->n_events);
		if (r->decided) {
			struct rsw_flow_cache_stats st;
			rsw_flow_cache_stats(r->decided, &st);
			fprintf(opts->setup_cpu,
				"replay: flow cache %u slots (doubled %llu times), %llu hits, "
				"%llu misses, %llu evictions, %llu not kept\n",
				r->decided->mask + 1, (unsigned long long)st.grown,
				(unsigned long long)st.hits, (unsigned long long)st.misses,
				(unsigned long long)st.evictions, (unsigned long long)st.uncached);
		}
	}
	return rsw_replay_part_close(r, cut, 1);
}
