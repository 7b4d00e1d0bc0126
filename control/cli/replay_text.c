/* What `rocesw replay` prints on stdout (replay_text.h). */
#include <stdlib.h>
#include <string.h>

#include "cli_table.h"
#include "replay_digest.h"
#include "replay_text.h"
#include "json_get.h"

#define TOP_DEFAULT 10

int rsw_text_opt(int opt, const char *arg, struct rsw_text_opts *o)
{
	char *end;
	switch (opt) {
	case RSW_OPT_TOP: {
		unsigned long n = strtoul(arg, &end, 10);
		if (!*arg || *end || arg[0] == '-' || n == 0 || n > 100000) {
			fprintf(stderr, "rocesw replay: --top expects a number of rows (1 or "
				"more), got '%s'\n", arg);
			return -1;
		}
		o->top = (unsigned)n;
		return 1;
	}
	case RSW_OPT_PORTS:
		if (!strcmp(arg, "all") || !strcmp(arg, "top")) {
			o->ports = arg[0] == 'a' ? RSW_PORTS_ALL : RSW_PORTS_TOP;
			return 1;
		}
		fprintf(stderr, "rocesw replay: --ports expects all or top, got '%s'\n", arg);
		return -1;
	default:
		return 0;
	}
}

static double mb(uint64_t bytes)
{
	return (double)bytes / 1e6;
}

/* Hosts in aggregate: how many sent, what they sent and received, how late, PFC. */
static void print_hosts(FILE *f, const json_t *sum)
{
	size_t i, senders = 0, paused = 0;
	uint64_t tx = 0, rx = 0, late = 0, max_delay = 0, pfc = 0, unsent = 0;
	json_t *h, *hosts = json_object_get(sum, "hosts");
	json_array_foreach(hosts, i, h) {
		senders += ju(h, "tx_packets") > 0;
		tx += ju(h, "tx_packets");
		rx += ju(h, "rx_packets");
		late += ju(h, "delayed_packets");
		pfc += ju(h, "pfc_rx_frames");
		paused += ju(h, "pfc_rx_frames") > 0;
		unsent += ju(h, "unsent");
		if (ju(h, "max_delay_ns") > max_delay)
			max_delay = ju(h, "max_delay_ns");
	}
	fprintf(f, "hosts: %zu, %zu sent: %lu frames sent (%lu late, max %.3f us), %lu received, "
		"%lu PFC frames received (by %zu hosts)%s", json_array_size(hosts), senders,
		(unsigned long)tx, (unsigned long)late, (double)max_delay / 1e3, (unsigned long)rx,
		(unsigned long)pfc, paused, unsent ? "" : "\n");
	if (unsent)
		fprintf(f, ", %lu not sent\n", (unsigned long)unsent);
}

static void print_drops(FILE *f, const json_t *sum)
{
	json_t *drops = json_object_get(sum, "drops"), *x;
	json_t *cons = json_object_get(sum, "conservation");
	json_t *lossless = json_object_get(cons, "lossless_drops");
	const char *k;
	if (!json_object_size(drops)) {
		fprintf(f, "drops: none\n");
		return;
	}
	static const char *const head[] = {"drop reason", "packets", "lossless"};
	struct rsw_cli_table *t = rsw_cli_table_new(3, head);
	json_object_foreach(drops, k, x) {
		rsw_cli_table_cell(t, "%s", k);
		rsw_cli_table_num(t, (unsigned long long)json_integer_value(x));
		rsw_cli_table_num(t, (unsigned long long)ju(lossless, k));
	}
	rsw_cli_table_print(t, f, "");
	if (!json_is_true(json_object_get(cons, "lossless_holds")))
		fprintf(f, "LOSSLESS drops of a reason other than headroom overflow or the "
			"watchdog: a defect\n");
}

/* The collective's result; steps one per line only when there are few. */
static void print_collective(FILE *f, const json_t *sum, unsigned top)
{
	json_t *c = json_object_get(sum, "collective"), *st;
	json_t *all = json_object_get(sum, "collective_ns");
	if (json_is_integer(all))
		fprintf(f, "all flows done in %.3f us\n", (double)json_integer_value(all) / 1e3);
	if (!json_is_object(c))
		return;
	json_t *steps = json_object_get(c, "step_done_ns");
	size_t i, n = json_array_size(steps), done = 0, longest = 0;
	uint64_t prev = ju(c, "start_ns"), worst = 0;
	json_array_foreach(steps, i, st) {
		if (!json_is_integer(st))
			continue;
		uint64_t t = (uint64_t)json_integer_value(st);
		if (n <= 2 * (size_t)top)
			fprintf(f, "step %-3zu done at %.3f us\n", i, (double)t / 1e3);
		if (t - prev > worst) {
			worst = t - prev;
			longest = i;
		}
		prev = t;
		done++;
	}
	if (n > 2 * (size_t)top)
		fprintf(f, "steps: %zu of %zu done, the last at %.3f us; the longest, step %zu, "
			"took %.3f us\n", done, n, (double)prev / 1e3, longest,
			(double)worst / 1e3);
	size_t nr = json_array_size(json_object_get(c, "ranks"));
	if (json_is_true(json_object_get(c, "complete")))
		fprintf(f, "collective %s over %zu ranks, %lu bytes: %.3f us, algbw %.2f GB/s, "
			"busbw %.2f GB/s\n", json_string_value(json_object_get(c, "pattern")), nr,
			(unsigned long)ju(c, "size_bytes"), (double)ju(c, "time_ns") / 1e3,
			json_number_value(json_object_get(c, "algbw_GBps")),
			json_number_value(json_object_get(c, "busbw_GBps")));
	else
		fprintf(f, "collective %s over %zu ranks: NOT complete: %s\n",
			json_string_value(json_object_get(c, "pattern")), nr,
			json_string_value(json_object_get(c, "incomplete_reason")));
	uint64_t naks = 0;
	json_t *q;
	json_array_foreach(json_object_get(c, "qps"), i, q)
		naks += ju(q, "naks_rx");
	fprintf(f, "transport: %lu packets retransmitted, %lu timeouts, %lu NAKs, %lu CNPs, %lu "
		"rate cuts, %lu injected drops\n", (unsigned long)ju(c, "retransmitted"),
		(unsigned long)ju(c, "timeouts"), (unsigned long)naks, (unsigned long)ju(c, "cnps"),
		(unsigned long)ju(c, "rate_cuts"), (unsigned long)ju(c, "injected_drops"));
	if (json_object_get(c, "ooo_packets"))
		fprintf(f, "reordering: %lu out-of-order packets, max PSN distance %lu, reorder "
			"buffer %lu packets / %lu bytes\n", (unsigned long)ju(c, "ooo_packets"),
			(unsigned long)ju(c, "ooo_max_distance"),
			(unsigned long)ju(c, "reorder_max_packets"),
			(unsigned long)ju(c, "reorder_max_bytes"));
}

static void print_links(FILE *f, const struct rsw_digest *d, unsigned top)
{
	size_t n = d->n_dir < top ? d->n_dir : top;
	fprintf(f, "\nHottest %s: top %zu of %zu by bytes\n", d->zone ? "link directions" : "ports",
		n, d->n_dir);
	static const char *const head[] = {"from", "to", "tier", "MB", "frames", "util %",
					   "PFC sent"};
	static const char *const port_head[] = {"port", "MB", "frames", "util %", "PFC sent"};
	struct rsw_cli_table *t = d->zone ? rsw_cli_table_new(7, head)
					  : rsw_cli_table_new(5, port_head);
	for (size_t k = 0; k < n; k++) {
		const struct rsw_link_dir *x = &d->dir[d->by_bytes[k]];
		rsw_cli_table_cell(t, "%s", x->from);
		if (d->zone) {
			rsw_cli_table_cell(t, "%s", x->to);
			rsw_cli_table_cell(t, "%s", rsw_digest_tier_name(x->tier));
		}
		rsw_cli_table_cell(t, "%.3f", mb(x->bytes));
		rsw_cli_table_num(t, x->frames);
		rsw_cli_table_cell(t, "%.2f", x->util);
		rsw_cli_table_num(t, x->pfc_tx);
	}
	rsw_cli_table_print(t, f, "(no links)");
}

static void print_queues(FILE *f, const struct rsw_digest *d, unsigned top)
{
	size_t n = d->n_q < top ? d->n_q : top;
	fprintf(f, "\nDeepest queues: top %zu of %zu that held a packet\n", n, d->n_q);
	static const char *const head[] = {"port", "queue", "max depth B", "packets", "ECN marked",
					   "dropped"};
	struct rsw_cli_table *t = rsw_cli_table_new(6, head);
	for (size_t k = 0; k < n; k++) {
		const struct rsw_queue_at *q = &d->q[k];
		rsw_cli_table_cell(t, "%s%s%s", q->sw ? q->sw : "", q->sw ? "|" : "", q->port);
		rsw_cli_table_num(t, q->queue);
		rsw_cli_table_num(t, q->depth);
		rsw_cli_table_num(t, q->packets);
		rsw_cli_table_num(t, q->ecn_marked);
		rsw_cli_table_num(t, q->dropped);
	}
	rsw_cli_table_print(t, f, "(no queue held a packet)");
}

static void print_tiers(FILE *f, const struct rsw_digest *d)
{
	fprintf(f, "\nLink utilization per tier, %% of wire time (nearest-rank percentiles)\n");
	static const char *const head[] = {"tier", "directions", "idle", "min", "p50", "p90", "p99",
					   "max", "mean"};
	struct rsw_cli_table *t = rsw_cli_table_new(9, head);
	for (unsigned k = 0; k < RSW_LT_N; k++) {
		const struct rsw_tier_dist *x = &d->tier[k];
		if (!x->n)
			continue;
		rsw_cli_table_cell(t, "%s", rsw_digest_tier_name(k));
		rsw_cli_table_num(t, x->n);
		rsw_cli_table_num(t, x->idle);
		rsw_cli_table_cell(t, "%.2f", x->min);
		rsw_cli_table_cell(t, "%.2f", x->p50);
		rsw_cli_table_cell(t, "%.2f", x->p90);
		rsw_cli_table_cell(t, "%.2f", x->p99);
		rsw_cli_table_cell(t, "%.2f", x->max);
		rsw_cli_table_cell(t, "%.2f", x->mean);
	}
	rsw_cli_table_print(t, f, "(no links)");
}

static void print_conservation(FILE *f, const json_t *sum)
{
	json_t *c = json_object_get(sum, "conservation");
	const char *verdict = json_is_true(json_object_get(c, "holds")) ? "holds" : "DOES NOT HOLD";
	if (!json_object_get(sum, "switches")) {
		fprintf(f, "last departure %.9f s; received %lu = transmitted %lu + dropped %lu + "
			"consumed %lu + queued %lu: %s\n", (double)ju(sum, "end_ns") / 1e9,
			(unsigned long)ju(c, "received"), (unsigned long)ju(c, "transmitted"),
			(unsigned long)ju(c, "dropped"), (unsigned long)ju(c, "consumed"),
			(unsigned long)ju(c, "queued"), verdict);
		return;
	}
	fprintf(f, "last departure %.9f s; entered %lu + PFC generated %lu = delivered %lu + left "
		"%lu + consumed %lu + dropped %lu + queued %lu + in flight %lu: %s\n",
		(double)ju(sum, "end_ns") / 1e9, (unsigned long)ju(c, "entered"),
		(unsigned long)ju(c, "generated"), (unsigned long)ju(c, "delivered"),
		(unsigned long)ju(c, "left"), (unsigned long)ju(c, "consumed"),
		(unsigned long)ju(c, "dropped"), (unsigned long)ju(c, "queued"),
		(unsigned long)ju(c, "in_flight"), verdict);
}

void rsw_replay_text_digest(FILE *f, const json_t *sum, unsigned top)
{
	struct rsw_digest d;
	if (rsw_digest_build(sum, &d) < 0) {
		fprintf(f, "(out of memory: the summary is in summary.json)\n");
		return;
	}
	if (d.zone)
		fprintf(f, "zone %s: %zu switches (%zu with hosts), %zu hosts, %zu links; every "
			"port in summary.json (or --ports all)\n",
			json_string_value(json_object_get(sum, "zone")), d.n_switches,
			json_object_size(d.leaf), d.n_hosts, d.n_links);
	fprintf(f, "switch ports: %lu frames received (%.3f MB), %lu transmitted (%.3f MB)\n",
		(unsigned long)d.rx_packets, mb(d.rx_bytes), (unsigned long)d.tx_packets,
		mb(d.tx_bytes));
	fprintf(f, "PFC: %lu frames sent by %zu switch ports, %lu received by switch ports\n",
		(unsigned long)d.pfc_tx, d.pfc_tx_ports, (unsigned long)d.pfc_rx);
	fprintf(f, "ECN: %lu packets marked in %zu queues\n", (unsigned long)d.ecn_marked,
		d.ecn_queues);
	if (d.zone)
		print_hosts(f, sum);
	print_drops(f, sum);
	print_collective(f, sum, top);
	print_links(f, &d, top);
	print_queues(f, &d, top);
	print_tiers(f, &d);
	fputc('\n', f);
	print_conservation(f, sum);
	rsw_digest_free(&d);
}

void rsw_replay_text_print(FILE *f, const struct rsw_zone *z, int zone,
			   const struct rsw_replay_result *r, const struct rsw_coll *coll,
			   const struct rsw_text_opts *o)
{
	int agg = o->ports == RSW_PORTS_TOP ||
		  (o->ports == RSW_PORTS_AUTO && zone && z->n_sw > RSW_DIGEST_SCALE_SWITCHES);
	if (!agg) {
		rsw_replay_summary_print(f, z, zone, r, coll);
	} else {
		json_t *sum = rsw_replay_summary_json(z, zone, r, coll);
		rsw_replay_text_digest(f, sum, o->top ? o->top : TOP_DEFAULT);
		json_decref(sum);
	}
	rsw_replay_deadlocks_print(f, z, r);
	rsw_replay_cut_print(f, r, z->n_host);
}
