/* rocesw-replay-mpi: `rocesw replay` with the zone partitioned over MPI ranks on ns-3's
 * distributed simulator (docs/replay-parallel.md). A rack (an RTSW and its hosts) stays on one
 * rank, CTSWs are spread; each rank runs its part on rocesw's own agenda and writes its captures;
 * frames to another rank travel through ns-3 (replay_ns3.cc); rank 0 merges the event logs by
 * their order key and the results, and writes the summary, report and text. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "huge_heap.h"
#include "dataplane/replay/collective.h"
#include "dataplane/replay/replay_part.h"
#include "dataplane/tm/shaper.h"
#include "dataplane/tm/tm.h"
#include "replay_ns3.h"
#include "replay_runner.h"

static struct {
	const struct rsw_replay_model *model;
	struct replay *r;
	struct rsw_replay_part part;
	uint32_t *sw_rank, *host_rank;
	int failed;
	uint64_t ran_to; /* the time of the last step run, plus one (0: none yet) */
} g;

static cpu_set_t g_cpus; /* the cores MPI gave this rank, before DPDK pinned it to one */

/* message: dir u32, t u64, len u32, has_flow u8, [flow key], the frame's first held bytes */
static void send_frame(void *arg, unsigned dir, uint64_t t, const uint8_t *data, uint32_t held,
		       uint32_t len, const struct rsw_flow_key *flow)
{
	(void)arg;
	const struct rsw_topo_link *lk = &g.model->link[dir / 2];
	const struct rsw_topo_end *to = dir % 2 ? &lk->a : &lk->b;
	unsigned rank = to->sw == RSW_TOPO_HOST ? g.host_rank[to->idx] : g.sw_rank[to->sw];
	uint8_t *p = rsw_ns3_frame(rank, t, 17 + (flow ? sizeof(*flow) : 0) + held);
	uint32_t d = dir;
	memcpy(p, &d, 4);
	memcpy(p + 4, &t, 8);
	memcpy(p + 12, &len, 4);
	p[16] = flow != NULL;
	p += 17;
	if (flow) {
		memcpy(p, flow, sizeof(*flow));
		p += sizeof(*flow);
	}
	memcpy(p, data, held);
}

uint64_t rsw_mpi_receive(const void *msg, size_t len)
{
	const uint8_t *p = msg;
	uint32_t dir, flen = 0;
	uint64_t t;
	struct rsw_flow_key key;
	/* its fixed fields, the flow key it says it has, then no more than the frame's length */
	int has = len >= 17 && p[16];
	size_t at = 17 + (has ? sizeof(key) : 0);
	if (len >= 16)
		memcpy(&flen, p + 12, 4);
	if (len < at || len - at > flen) {
		fprintf(stderr, "rocesw-replay-mpi: a malformed message from another rank\n");
		rsw_ns3_abort();
	}
	memcpy(&dir, p, 4);
	memcpy(&t, p + 4, 8);
	if (has)
		memcpy(&key, p + 17, sizeof(key));
	p += at;
	if (t < g.ran_to) { /* its time was run without it: outputs would depend on timing */
		fprintf(stderr, "rocesw-replay-mpi: rank %u: a frame from another rank arrives at "
			"%llu ns, after this rank ran %llu ns\n", rsw_ns3_rank(),
			(unsigned long long)t, (unsigned long long)(g.ran_to - 1));
		rsw_ns3_abort();
	}
	rsw_replay_part_deliver(g.r, dir, t, p, (uint32_t)(len - at), flen, has ? &key : NULL);
	return t;
}

uint64_t rsw_mpi_next(void)
{
	return g.failed ? UINT64_MAX : rsw_replay_part_next(g.r);
}

int rsw_mpi_run_at(uint64_t t)
{
	g.ran_to = t + 1;
	if (rsw_replay_part_run_at(g.r, t) < 0)
		g.failed = 1;
	return g.failed ? -1 : 0;
}

uint64_t rsw_mpi_dl_next(void)
{
	return rsw_replay_part_dl_next(g.r);
}

int rsw_mpi_dl_armed(void)
{
	return rsw_replay_part_dl_armed(g.r);
}

static void dl_failed(void)
{
	fprintf(stderr, "rocesw-replay-mpi: rank %u: the PFC deadlock check failed (out of "
		"memory, or its exchange)\n", rsw_ns3_rank());
	rsw_ns3_abort();
}

void rsw_mpi_dl_at(uint64_t t, int armed)
{
	if (rsw_replay_part_dl_at(g.r, t, armed, t, 1) < 0)
		dl_failed();
}

static int gather(void *arg, const void *mine, size_t len, char **all, size_t *all_len)
{
	(void)arg;
	return rsw_ns3_allgather(mine, len, all, all_len);
}

/* The grid's points up to a cut run's cut, then the check at the end of the run: at its cut, or
 * at the last frame sent anywhere. */
static void dl_end(uint64_t cut, uint64_t end)
{
	while (cut && rsw_replay_part_dl_next(g.r) <= cut) {
		uint64_t armed = (uint64_t)rsw_replay_part_dl_armed(g.r);
		rsw_ns3_sum_u64(&armed, 1);
		if (rsw_replay_part_dl_at(g.r, rsw_replay_part_dl_next(g.r), armed != 0, cut, 0) < 0)
			dl_failed();
	}
	if (rsw_replay_part_dl_end(g.r, cut ? cut : end) < 0)
		dl_failed();
}

/* Racks stay whole: an RTSW (a switch with hosts) and its hosts on one rank, in blocks of
 * consecutive racks; switches without hosts (CTSWs) round-robin. */
static void partition(const struct rsw_replay_model *m, unsigned n)
{
	uint8_t *has_host = calloc(m->n_sw + 1, 1);
	unsigned n_rack = 0, rack = 0, spine = 0;
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_link *lk = &m->link[i];
		if (lk->a.sw == RSW_TOPO_HOST && lk->b.sw != RSW_TOPO_HOST)
			has_host[lk->b.sw] = 1;
		if (lk->b.sw == RSW_TOPO_HOST && lk->a.sw != RSW_TOPO_HOST)
			has_host[lk->a.sw] = 1;
	}
	for (unsigned s = 0; s < m->n_sw; s++)
		n_rack += has_host[s];
	for (unsigned s = 0; s < m->n_sw; s++)
		g.sw_rank[s] = has_host[s] ? (unsigned)((uint64_t)rack++ * n / n_rack) : spine++ % n;
	for (unsigned h = 0; h < m->n_host; h++)
		g.host_rank[h] = 0;
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_link *lk = &m->link[i];
		if (lk->a.sw == RSW_TOPO_HOST && lk->b.sw != RSW_TOPO_HOST)
			g.host_rank[lk->a.idx] = g.sw_rank[lk->b.sw];
		if (lk->b.sw == RSW_TOPO_HOST && lk->a.sw != RSW_TOPO_HOST)
			g.host_rank[lk->b.idx] = g.sw_rank[lk->a.sw];
	}
	free(has_host);
}

static unsigned end_rank(const struct rsw_topo_end *e)
{
	return e->sw == RSW_TOPO_HOST ? g.host_rank[e->idx] : g.sw_rank[e->sw];
}

/* A remote channel per pair of ranks sharing links, its delay the pair's lookahead: the
 * earliest a frame put on one of their links can arrive, less the nanosecond by which it is
 * received early (replay_ns3.cc). */
static int channels(const struct rsw_replay_model *m, unsigned n, char *err, size_t errlen)
{
	uint64_t *la = malloc((size_t)n * n * sizeof(*la));
	if (!la) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < (size_t)n * n; i++)
		la[i] = UINT64_MAX;
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_link *lk = &m->link[i];
		unsigned a = end_rank(&lk->a), b = end_rank(&lk->b);
		if (a == b)
			continue;
		uint64_t d = lk->delay_ns + rsw_frame_ns(60, lk->speed_mbps);
		if (d < 2) {
			snprintf(err, errlen, "link %u crosses ranks with no delay: no lookahead", i);
			free(la);
			return -1;
		}
		unsigned lo = a < b ? a : b, hi = a < b ? b : a;
		if (d - 1 < la[lo * n + hi])
			la[lo * n + hi] = d - 1;
	}
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = a + 1; b < n; b++)
			if (la[a * n + b] != UINT64_MAX)
				rsw_ns3_pair(a, b, la[a * n + b]);
	free(la);
	return 0;
}

/* Lines of each rank's log in key order; merged by key, without it. */
static void merge_events(FILE *mine, FILE *out)
{
	size_t n = 0;
	char *buf = NULL;
	fflush(mine);
	long len = ftell(mine);
	char *data = malloc(len > 0 ? (size_t)len : 1);
	rewind(mine);
	if (len > 0 && fread(data, 1, (size_t)len, mine) != (size_t)len)
		len = 0;
	unsigned ranks = rsw_ns3_size();
	size_t *lens = calloc(ranks, sizeof(*lens));
	rsw_ns3_gather(data, len > 0 ? (size_t)len : 0, &buf, lens);
	free(data);
	if (rsw_ns3_rank() == 0) {
		char **pos = calloc(ranks, sizeof(*pos)), **end = calloc(ranks, sizeof(*end));
		for (unsigned i = 0; i < ranks; i++) {
			pos[i] = buf + n;
			n += lens[i];
			end[i] = buf + n;
		}
		for (;;) {
			int best = -1;
			for (unsigned i = 0; i < ranks; i++)
				if (pos[i] < end[i] && (best < 0 || memcmp(pos[i], pos[best],
						RSW_REPLAY_PART_KEY_LEN) < 0))
					best = (int)i;
			if (best < 0)
				break;
			char *nl = memchr(pos[best], '\n', (size_t)(end[best] - pos[best]));
			char *stop = nl ? nl + 1 : end[best];
			fwrite(pos[best] + RSW_REPLAY_PART_KEY_LEN, 1,
			       (size_t)(stop - pos[best]) - RSW_REPLAY_PART_KEY_LEN, out);
			pos[best] = stop;
		}
		free(pos);
		free(end);
	}
	free(buf);
	free(lens);
}

/* A growing byte buffer for what a rank hands rank 0. */
struct pack {
	char *b;
	size_t n, cap;
};

static void put(struct pack *p, const void *d, size_t len)
{
	if (p->n + len > p->cap) {
		size_t cap = (p->cap ? 2 * p->cap : 1 << 16) + len;
		char *nb = realloc(p->b, cap);
		if (!nb) {
			fprintf(stderr, "rocesw-replay-mpi: out of memory\n");
			rsw_ns3_abort();
		}
		p->b = nb;
		p->cap = cap;
	}
	memcpy(p->b + p->n, d, len);
	p->n += len;
}

static const char *take(const char **at, size_t len)
{
	const char *d = *at;
	*at += len;
	return d;
}

/* A queue's state and counters: what follows its VOQ in struct rsw_tm_queue. */
#define Q_STATE (sizeof(struct rsw_tm_queue) - offsetof(struct rsw_tm_queue, storm))

/* What the summary reads of a switch's traffic manager: its counters and watermarks. */
static void put_tm(struct pack *p, const struct rsw_tm *tm)
{
	put(p, tm->pool_used, sizeof(tm->pool_used));
	put(p, tm->pool_peak, sizeof(tm->pool_peak));
	put(p, tm->pool_hdrm, sizeof(tm->pool_hdrm));
	for (uint16_t i = 0; i < tm->n_ports; i++) {
		const struct rsw_tm_port *tp = rsw_tm_port_read(tm, i);
		put(p, tp->pg, sizeof(tp->pg));
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) /* the counters, not the VOQ */
			put(p, &tp->q[q].storm, Q_STATE);
		put(p, tp->cold->qd, sizeof(tp->cold->qd));
		put(p, &tp->pause, sizeof(tp->pause));
		put(p, tp->cold->gen, sizeof(tp->cold->gen));
		put(p, &tp->xoff_pgs, sizeof(tp->xoff_pgs));
		put(p, tp->cold->wd, sizeof(tp->cold->wd));
	}
}

static size_t tm_bytes(const struct rsw_tm *tm)
{
	const struct rsw_tm_port *tp = &rsw_tm_port_idle;
	return sizeof(tm->pool_used) + sizeof(tm->pool_peak) + sizeof(tm->pool_hdrm) +
	       tm->n_ports * (sizeof(tp->pg) + RSW_TM_QUEUES * Q_STATE +
			      sizeof(tp->cold->qd) + sizeof(tp->pause) +
			      sizeof(tp->cold->gen) + sizeof(tp->xoff_pgs) + sizeof(tp->cold->wd));
}

static void take_tm(const char **at, struct rsw_tm *tm)
{
	memcpy(tm->pool_used, take(at, sizeof(tm->pool_used)), sizeof(tm->pool_used));
	memcpy(tm->pool_peak, take(at, sizeof(tm->pool_peak)), sizeof(tm->pool_peak));
	memcpy(tm->pool_hdrm, take(at, sizeof(tm->pool_hdrm)), sizeof(tm->pool_hdrm));
	for (uint16_t i = 0; i < tm->n_ports; i++) {
		struct rsw_tm_port *tp = rsw_tm_port_use(tm, i);
		memcpy(tp->pg, take(at, sizeof(tp->pg)), sizeof(tp->pg));
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++)
			memcpy(&tp->q[q].storm, take(at, Q_STATE), Q_STATE);
		memcpy(tp->cold->qd, take(at, sizeof(tp->cold->qd)), sizeof(tp->cold->qd));
		memcpy(&tp->pause, take(at, sizeof(tp->pause)), sizeof(tp->pause));
		memcpy(tp->cold->gen, take(at, sizeof(tp->cold->gen)), sizeof(tp->cold->gen));
		memcpy(&tp->xoff_pgs, take(at, sizeof(tp->xoff_pgs)), sizeof(tp->xoff_pgs));
		memcpy(tp->cold->wd, take(at, sizeof(tp->cold->wd)), sizeof(tp->cold->wd));
	}
}

static int order_cmp(const struct rsw_replay_order *a, const struct rsw_replay_order *b)
{
	if (a->ordered != b->ordered)
		return a->ordered ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->n < b->n ? -1 : a->n > b->n;
}

static int hop_cmp(const void *a, const void *b)
{
	return order_cmp(&((const struct rsw_replay_hop *)a)->first,
			 &((const struct rsw_replay_hop *)b)->first);
}

struct merged_flow {
	struct rsw_flow_key key;
	struct rsw_replay_flow f;
};

static int flow_cmp(const void *a, const void *b)
{
	return order_cmp(&((const struct merged_flow *)a)->f.first,
			 &((const struct merged_flow *)b)->f.first);
}

/* Each flow's counts summed over the ranks that saw it, its hops and the flows in the order
 * one process would have found them (their rsw_replay_order keys). */
static void merge_flow(struct rsw_replay_flow *to, const struct rsw_replay_flow *from,
		       const struct rsw_replay_hop *hops)
{
	if (from->packets_in && (!to->packets_in || from->first_in_ns < to->first_in_ns))
		to->first_in_ns = from->first_in_ns;
	to->packets_in += from->packets_in;
	to->bytes_in += from->bytes_in;
	to->packets_out += from->packets_out;
	if (from->done_ns > to->done_ns)
		to->done_ns = from->done_ns;
	if (from->first.ordered && order_cmp(&from->first, &to->first) < 0)
		to->first = from->first;
	if (!from->n_hop)
		return;
	to->hop = realloc(to->hop, (to->n_hop + from->n_hop) * sizeof(*to->hop));
	memcpy(to->hop + to->n_hop, hops, from->n_hop * sizeof(*hops));
	to->n_hop += from->n_hop;
}

static void merge_flows(const char **at, size_t n,
			struct rsw_flow_table *tab, struct merged_flow **mf, size_t *cap)
{
	for (size_t i = 0; i < n; i++) {
		const struct rsw_flow_key *k = (const void *)take(at, sizeof(*k));
		struct rsw_replay_flow f;
		memcpy(&f, take(at, sizeof(f)), sizeof(f));
		const struct rsw_replay_hop *h = (const void *)take(at, f.n_hop * sizeof(*h));
		size_t before = tab->n;
		long fi = rsw_flow_table_find_add(tab, k);
		if (fi < 0) {
			fprintf(stderr, "rocesw-replay-mpi: out of memory\n");
			rsw_ns3_abort();
		}
		if (tab->n > before) { /* new */
			if ((size_t)fi >= *cap) {
				*cap = *cap ? 2 * *cap : 1024;
				*mf = realloc(*mf, *cap * sizeof(**mf));
			}
			memset(&(*mf)[fi], 0, sizeof(**mf));
			(*mf)[fi].key = *k;
		}
		struct merged_flow *m = &(*mf)[fi];
		merge_flow(&m->f, &f, h);
	}
}

/* The collective's progress: each chunk arrived on the rank of its receiver, each QP's counters
 * were kept by its sender's rank (requester) and its receiver's (responder). */
static void merge_coll(struct rsw_coll_result *cr)
{
	uint64_t v[] = {cr->arrived, cr->injected_drops};
	rsw_ns3_sum_u64(v, 2);
	cr->arrived = v[0];
	cr->injected_drops = v[1];
	cr->complete = cr->arrived == cr->transfers;
	rsw_ns3_max_u64(cr->step_done_ns, cr->n_steps);
	rsw_ns3_max_u64(&cr->done_ns, 1);
	for (uint64_t i = 0; i < cr->n_qps; i++) {
		struct rsw_coll_qp_stats *q = &cr->qp[i];
		struct rsw_reorder_counts *ro = &q->reorder;
		uint64_t sum[] = {q->data_packets, q->data_bytes, q->retransmitted, q->timeouts,
				  q->naks_rx, q->acks_rx, q->naks_tx, q->acks_tx, q->cnps_rx,
				  q->cnps_tx, q->rate_cuts, q->cts_rx, q->cts_tx, ro->ooo_packets};
		uint64_t mx[] = {(uint64_t)q->error, q->error_ns, q->unacked_psn, q->sent_psn,
				 ro->ooo_max_distance, ro->reorder_max_packets, ro->reorder_max_bytes};
		rsw_ns3_sum_u64(sum, sizeof(sum) / sizeof(sum[0]));
		rsw_ns3_max_u64(mx, sizeof(mx) / sizeof(mx[0]));
		rsw_ns3_min_u64(&q->min_rate_mbps, 1);
		q->data_packets = sum[0], q->data_bytes = sum[1], q->retransmitted = sum[2];
		q->timeouts = sum[3], q->naks_rx = sum[4], q->acks_rx = sum[5], q->naks_tx = sum[6];
		q->acks_tx = sum[7], q->cnps_rx = sum[8], q->cnps_tx = sum[9], q->rate_cuts = sum[10];
		q->cts_rx = sum[11], q->cts_tx = sum[12], ro->ooo_packets = sum[13];
		q->error = (int)mx[0], q->error_ns = mx[1], q->unacked_psn = mx[2];
		q->sent_psn = mx[3], ro->ooo_max_distance = mx[4], ro->reorder_max_packets = mx[5];
		ro->reorder_max_bytes = mx[6];
	}
}

/* What rank me hands rank 0: its switches (with their traffic managers' counters), its hosts,
 * and the flows it saw with their hops. */
static void pack_rank(const struct rsw_replay_model *m, const struct rsw_replay_result *res,
		      unsigned me, struct pack *p)
{
	for (unsigned s = 0; s < m->n_sw; s++)
		if (g.sw_rank[s] == me) {
			put(p, &res->sw[s], sizeof(res->sw[s]));
			put_tm(p, res->sw[s].tm);
		}
	for (unsigned h = 0; h < m->n_host; h++)
		if (g.host_rank[h] == me)
			put(p, &res->host[h], sizeof(res->host[h]));
	uint64_t nf = res->n_flows;
	put(p, &nf, sizeof(nf));
	for (size_t i = 0; i < res->n_flows; i++) {
		put(p, &res->flow_key[i], sizeof(res->flow_key[i]));
		put(p, &res->flow[i], sizeof(res->flow[i]));
		put(p, res->flow[i].hop, res->flow[i].n_hop * sizeof(*res->flow[i].hop));
	}
}

/* Rank r's switches and hosts into rank 0's result (rank 0's own are in place), its flows into
 * the table of every rank's. */
static void unpack_rank(const struct rsw_replay_model *m, struct rsw_replay_result *res,
			unsigned r, const char **at, struct rsw_flow_table *tab,
			struct merged_flow **mf, size_t *cap)
{
	for (unsigned s = 0; s < m->n_sw; s++) {
		if (g.sw_rank[s] != r)
			continue;
		struct rsw_tm *tm = res->sw[s].tm;
		const char *d = take(at, sizeof(res->sw[s]));
		if (r) {
			memcpy(&res->sw[s], d, sizeof(res->sw[s]));
			res->sw[s].tm = tm;
			take_tm(at, tm);
		} else {
			*at += tm_bytes(tm);
		}
	}
	for (unsigned h = 0; h < m->n_host; h++)
		if (g.host_rank[h] == r) {
			const char *d = take(at, sizeof(res->host[h]));
			if (r)
				memcpy(&res->host[h], d, sizeof(res->host[h]));
		}
	uint64_t n;
	memcpy(&n, take(at, sizeof(n)), sizeof(n));
	merge_flows(at, n, tab, mf, cap);
}

/* The merged flows replace rank 0's, in the order one process finds them, each flow's hops too. */
static void order_flows(struct rsw_replay_result *res, struct rsw_flow_table *tab,
			struct merged_flow *mf)
{
	for (size_t i = 0; i < res->n_flows; i++)
		free(res->flow[i].hop);
	free(res->flow);
	free(res->flow_key);
	qsort(mf, tab->n, sizeof(*mf), flow_cmp);
	res->n_flows = tab->n;
	res->flow = calloc(tab->n + 1, sizeof(*res->flow));
	res->flow_key = calloc(tab->n + 1, sizeof(*res->flow_key));
	for (size_t i = 0; i < tab->n; i++) {
		qsort(mf[i].f.hop, mf[i].f.n_hop, sizeof(*mf[i].f.hop), hop_cmp);
		res->flow[i] = mf[i].f;
		res->flow_key[i] = mf[i].key;
	}
	free(mf);
	rsw_flow_table_free(tab);
}

/* Each deadlock's flows by their index among the merged ones (every rank found the same
 * deadlocks, their flows by key). */
static void number_dl_flows(struct rsw_replay_result *res)
{
	struct rsw_flow_table tab = {0};
	for (size_t i = 0; i < res->n_flows; i++)
		rsw_flow_table_find_add(&tab, &res->flow_key[i]);
	for (unsigned k = 0; k < res->n_deadlock; k++)
		for (unsigned i = 0; i < res->deadlock[k].n_flow; i++) {
			struct rsw_replay_dl_flow *f = &res->deadlock[k].flow[i];
			long x = rsw_flow_table_find_add(&tab, &f->key);
			f->flow = x < 0 || (size_t)x >= res->n_flows ? UINT32_MAX : (uint32_t)x;
		}
	rsw_flow_table_free(&tab);
}

/* The zone's totals: summed over the ranks, the earliest start and the latest end. */
static void merge_totals(const struct rsw_replay_model *m, struct rsw_replay_result *res)
{
	if (res->coll)
		merge_coll(res->coll);
	if (res->link_lost) /* counted by the part that put frames on a down link */
		rsw_ns3_sum_u64(res->link_lost, 2 * (size_t)m->n_link);
	uint64_t mn = res->entered || res->generated ? res->start_ns : UINT64_MAX;
	rsw_ns3_min_u64(&mn, 1);
	res->start_ns = mn == UINT64_MAX ? 0 : mn;
	uint64_t sum[] = {res->entered, res->generated, res->delivered, res->left, res->consumed,
			  res->dropped, res->queued, res->in_flight};
	rsw_ns3_sum_u64(sum, sizeof(sum) / sizeof(sum[0]));
	res->entered = sum[0], res->generated = sum[1], res->delivered = sum[2];
	res->left = sum[3], res->consumed = sum[4], res->dropped = sum[5];
	res->queued = sum[6], res->in_flight = sum[7];
	uint64_t mx[] = {res->end_ns, res->cut_ns};
	rsw_ns3_max_u64(mx, 2);
	res->end_ns = mx[0], res->cut_ns = mx[1];
}

/* Rank 0's result gets every rank's switches, hosts and flows, and the sums of the whole zone. */
static void merge_results(const struct rsw_replay_model *m, struct rsw_replay_result *res)
{
	unsigned me = rsw_ns3_rank(), ranks = rsw_ns3_size();
	struct pack p = {0};
	pack_rank(m, res, me, &p);
	char *all = NULL;
	size_t *lens = calloc(ranks, sizeof(*lens));
	rsw_ns3_gather(p.b, p.n, &all, lens);
	free(p.b);
	if (me == 0) {
		const char *at = all;
		struct rsw_flow_table tab = {0};
		struct merged_flow *mf = NULL;
		size_t cap = 0;
		for (unsigned r = 0; r < ranks; r++)
			unpack_rank(m, res, r, &at, &tab, &mf, &cap);
		order_flows(res, &tab, mf);
		number_dl_flows(res);
	}
	free(all);
	free(lens);
	merge_totals(m, res);
}

static int run_parts(const struct rsw_replay_model *m, const char *out_dir,
		     const struct rsw_replay_opts *opts, struct rsw_replay_result *res, char *err,
		     size_t errlen)
{
	unsigned ranks = rsw_ns3_size();
	sched_setaffinity(0, sizeof(g_cpus), &g_cpus);
	g.model = m;
	g.sw_rank = calloc(m->n_sw + 1, sizeof(*g.sw_rank));
	g.host_rank = calloc(m->n_host + 1, sizeof(*g.host_rank));
	partition(m, ranks);
	if (channels(m, ranks, err, errlen) < 0)
		return -1;
	g.part = (struct rsw_replay_part){.rank = rsw_ns3_rank(), .sw_rank = g.sw_rank,
					  .host_rank = g.host_rank, .send = send_frame,
					  .gather = gather};
	struct rsw_replay_opts o = *opts;
	o.progress = NULL;
	o.events = opts->events ? tmpfile() : NULL;
	g.r = rsw_replay_part_open(m, out_dir, &o, &g.part, res, err, errlen);
	if (!g.r) {
		fprintf(stderr, "rocesw-replay-mpi: rank %u: %s\n", g.part.rank, err);
		rsw_ns3_abort();
	}
	rsw_ns3_run(opts->until_ns);
	uint64_t next = rsw_replay_part_next(g.r);
	uint64_t cut = opts->until_ns && next != UINT64_MAX ? opts->until_ns : 0;
	/* the zone's last wake-up, cut and last frame sent */
	uint64_t zone[3] = {rsw_replay_part_last(g.r), cut, res->end_ns};
	rsw_ns3_max_u64(zone, 3);
	rsw_replay_part_sample_to(g.r, zone[0]);
	dl_end(zone[1], zone[2]);
	int rc = rsw_replay_part_close(g.r, cut, !g.failed);
	if (rc < 0) {
		fprintf(stderr, "rocesw-replay-mpi: rank %u: %s\n", g.part.rank, err);
		rsw_ns3_abort();
	}
	if (o.events) {
		merge_events(o.events, opts->events);
		fclose(o.events);
	}
	merge_results(m, res);
	if (opts->capture) { /* what every rank wrote */
		uint64_t c[] = {opts->capture->files, opts->capture->bytes};
		rsw_ns3_sum_u64(c, 2);
		opts->capture->files = (unsigned)c[0];
		opts->capture->bytes = c[1];
	}
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mpirun -np N rocesw-replay-mpi [--sync window|null-messages] "
		"REPLAY-ARGS...\n"
		"  `rocesw replay` partitioned over MPI ranks on ns-3's distributed simulator\n"
		"  (docs/replay-parallel.md): racks stay whole, CTSWs are spread; outputs are those\n"
		"  of `rocesw replay` with the same arguments, byte for byte.\n"
		"  --sync window          ns-3's granted time window (default)\n"
		"  --sync null-messages   ns-3's null messages\n"
		"  GPL-2.0 as a whole: it links ns-3 (rocesw itself is BSD-3-Clause).\n");
}

int main(int argc, char **argv)
{
	int null_msg = 0;
	rsw_huge_heap(argv);
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("rocesw-replay-mpi %s\n", RSW_VERSION);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--sync")) {
		if (!strcmp(argv[2], "null-messages")) {
			null_msg = 1;
		} else if (strcmp(argv[2], "window")) {
			fprintf(stderr, "rocesw-replay-mpi: --sync: window or null-messages\n");
			return 2;
		}
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	sched_getaffinity(0, sizeof(g_cpus), &g_cpus);
	rsw_ns3_init(&argc, &argv, null_msg);
	rsw_replay_runner = run_parts;
	rsw_replay_rank = rsw_ns3_rank();
	int rc = rsw_cmd_replay(argc, argv);
	rsw_ns3_finish();
	return rc;
}
