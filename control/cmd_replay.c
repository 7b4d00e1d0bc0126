/* `rocesw replay`: captures through one switch on virtual time (dataplane/replay). */
#include <getopt.h>
#include <sys/stat.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/replay/replay.h"
#include "dataplane/tm/tm.h"
#include "dataplane/tables/table_types.h"
#include "eal_quiet.h"

#define MAX_INPUTS 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw replay --config F --out DIR --in PORT=FILE [--in PORT=FILE ...]\n"
		"                     [--seed N] [--until NS] [--sample-ns NS]\n"
		"\n"
		"Replays captures through the switch of config F on virtual time: each frame enters\n"
		"PORT at its capture timestamp, goes through the same parser, tables and traffic\n"
		"manager as the live switch, and leaves each port when its shaper lets it. Writes\n"
		"DIR/<port>.pcap (nanosecond timestamps = departure times), DIR/events.jsonl (drops\n"
		"with reason, ECN marks, PFC sent and received, watchdog, queue depth samples) and\n"
		"DIR/summary.json, and\n"
		"prints a summary. The same inputs, config and seed give byte-identical outputs.\n"
		"\n"
		"  --in PORT=FILE  a capture entering port PORT (its name in F); repeatable\n"
		"  --seed N        seed of the ECN marking random source (default 1)\n"
		"  --until NS      stop at this virtual time (ns); what is queued then counts as queued\n"
		"  --sample-ns NS  queue-depth sampling period of the event log (default 1000)\n"
		"\n"
		"Zone configs (several switches and links) are not supported yet.\n");
}

static json_t *summary_json(const struct rsw_fib *fib, const struct rsw_replay_result *r)
{
	json_t *root = json_object(), *ports = json_array(), *drops = json_object();
	for (uint16_t p = 0; p < fib->n_ports; p++) {
		const struct rsw_replay_port_stats *s = &r->port[p];
		const struct rsw_tm_port *tp = &r->tm->port[p];
		json_t *o = json_object(), *queues = json_array(), *pfc = json_object();
		json_object_set_new(o, "name", json_string(fib->ports[p].name));
		json_object_set_new(o, "rx_packets", json_integer((json_int_t)s->rx_packets));
		json_object_set_new(o, "rx_bytes", json_integer((json_int_t)s->rx_bytes));
		json_object_set_new(o, "tx_packets", json_integer((json_int_t)s->tx_packets));
		json_object_set_new(o, "tx_bytes", json_integer((json_int_t)s->tx_bytes));
		for (unsigned i = 0; i < 8; i++) {
			char k[48];
			snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_TX_PKTS", i);
			json_object_set_new(pfc, k, json_integer((json_int_t)tp->gen[i].tx_frames));
			snprintf(k, sizeof(k), "SAI_PORT_STAT_PFC_%u_RX_PKTS", i);
			json_object_set_new(pfc, k, json_integer((json_int_t)tp->pause.rx_frames[i]));
		}
		json_object_set_new(o, "pfc", pfc);
		for (unsigned q = 0; q < RSW_TM_QUEUES; q++) {
			json_t *x = json_object();
			json_object_set_new(x, "queue", json_integer(q));
			json_object_set_new(x, "packets", json_integer((json_int_t)tp->qs[q].packets));
			json_object_set_new(x, "max_depth_bytes", json_integer((json_int_t)tp->q[q].peak));
			json_object_set_new(x, "ecn_marked_packets",
					    json_integer((json_int_t)tp->qs[q].ecn_marked_packets));
			json_object_set_new(x, "dropped_packets",
					    json_integer((json_int_t)tp->qs[q].dropped_packets));
			json_array_append_new(queues, x);
		}
		json_object_set_new(o, "queues", queues);
		json_array_append_new(ports, o);
	}
	for (unsigned d = 1; d < RSW_DROP_COUNT; d++)
		if (r->drops[d])
			json_object_set_new(drops, rsw_drop_reason_name(d),
					    json_integer((json_int_t)r->drops[d]));
	json_t *cons = json_object();
	json_object_set_new(cons, "received", json_integer((json_int_t)r->received));
	json_object_set_new(cons, "transmitted", json_integer((json_int_t)r->transmitted));
	json_object_set_new(cons, "dropped", json_integer((json_int_t)r->dropped));
	json_object_set_new(cons, "consumed", json_integer((json_int_t)r->consumed));
	json_object_set_new(cons, "queued", json_integer((json_int_t)r->queued));
	json_object_set_new(cons, "holds", json_boolean(r->received == r->transmitted + r->dropped +
									  r->consumed + r->queued));
	json_t *flows = json_array();
	for (size_t i = 0; i < r->n_flows; i++) {
		const struct rsw_flow_key *k = &r->flow_key[i];
		const struct rsw_replay_flow *f = &r->flow[i];
		struct rsw_ip a = {.family = k->l3 == 2 ? 6 : 4}, b = a;
		char sa[64], sb[64];
		memcpy(a.a, k->src, 16);
		memcpy(b.a, k->dst, 16);
		json_t *o = json_object();
		json_object_set_new(o, "src", json_string(rsw_ip_str(&a, sa, sizeof(sa))));
		json_object_set_new(o, "dst", json_string(rsw_ip_str(&b, sb, sizeof(sb))));
		json_object_set_new(o, "protocol", json_integer(k->proto));
		json_object_set_new(o, "sport", json_integer(k->sport));
		json_object_set_new(o, "dport", json_integer(k->dport));
		json_object_set_new(o, "dest_qp", json_integer(k->qp));
		json_object_set_new(o, "packets_in", json_integer((json_int_t)f->packets_in));
		json_object_set_new(o, "packets_out", json_integer((json_int_t)f->packets_out));
		json_object_set_new(o, "bytes_in", json_integer((json_int_t)f->bytes_in));
		json_object_set_new(o, "start_ns", json_integer((json_int_t)f->first_in_ns));
		json_object_set_new(o, "done_ns", f->packets_out ? json_integer((json_int_t)f->done_ns)
								 : json_null());
		json_object_set_new(o, "completion_ns",
				    f->packets_out == f->packets_in
					    ? json_integer((json_int_t)(f->done_ns - f->first_in_ns))
					    : json_null());
		json_array_append_new(flows, o);
	}
	json_object_set_new(root, "end_ns", json_integer((json_int_t)r->end_ns));
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "drops", drops);
	json_object_set_new(root, "flows", flows);
	json_object_set_new(root, "conservation", cons);
	return root;
}

int rsw_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"out", required_argument, NULL, 'o'},
		{"in", required_argument, NULL, 'i'}, {"seed", required_argument, NULL, 's'},
		{"until", required_argument, NULL, 'u'}, {"help", no_argument, NULL, 'h'},
		{"sample-ns", required_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	const char *config = NULL, *out = NULL;
	char *in_arg[MAX_INPUTS];
	unsigned n_in = 0;
	unsigned long long seed = 1, until = 0, sample = 1000;
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'o': out = optarg; break;
		case 'i':
			if (n_in == MAX_INPUTS || !strchr(optarg, '=')) {
				fprintf(stderr, "rocesw replay: --in expects PORT=FILE (at most %d)\n",
					MAX_INPUTS);
				return 2;
			}
			in_arg[n_in++] = optarg;
			break;
		case 's':
		case 'S':
		case 'u': {
			unsigned long long v = strtoull(optarg, &end, 0);
			if (!*optarg || *end || optarg[0] == '-') {
				fprintf(stderr, "rocesw replay: --%s expects a number, got '%s'\n",
					c == 's' ? "seed" : c == 'S' ? "sample-ns" : "until", optarg);
				return 2;
			}
			if (c == 's')
				seed = v;
			else if (c == 'S')
				sample = v;
			else
				until = v;
			break;
		}
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!config || !out || !n_in || optind < argc) {
		fprintf(stderr, "rocesw replay: give --config, --out and at least one --in\n");
		usage(stderr);
		return 2;
	}
	char err[1024];
	if (rsw_eal_init_quiet("rocesw") < 0)
		return 1;
	struct rsw_txn *txn = rsw_txn_new();
	struct rsw_switch *sw = rsw_switch_new(NULL, err, sizeof(err));
	if (!txn || !sw || rsw_config_compile(config, txn, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		rsw_txn_free(txn);
		rsw_switch_free(sw);
		return 1;
	}
	/* the seed of the ECN random source travels in the switch profile */
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		struct rsw_table_write *w = (struct rsw_table_write *)rsw_txn_at(txn, i);
		if (w->table == RSW_T_SWITCH)
			w->u.sw.tm.ecn_seed = seed;
	}
	int rc = rsw_switch_commit(sw, txn, err, sizeof(err));
	rsw_txn_free(txn);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		rsw_switch_free(sw);
		return 1;
	}
	struct rsw_replay_input in[MAX_INPUTS];
	for (unsigned i = 0; i < n_in; i++) {
		char *eq = strchr(in_arg[i], '=');
		*eq = 0;
		int p = rsw_state_port_index(sw->state, in_arg[i]);
		if (p < 0) {
			fprintf(stderr, "rocesw replay: --in %s: no port named '%s' in %s\n", in_arg[i],
				in_arg[i], config);
			rsw_switch_free(sw);
			return 2;
		}
		in[i].port = (uint16_t)p;
		in[i].path = eq + 1;
	}
	struct rsw_replay_result res;
	char evpath[4096];
	snprintf(evpath, sizeof(evpath), "%s/events.jsonl", out);
	mkdir(out, 0755);
	FILE *ev = fopen(evpath, "w");
	if (!ev) {
		fprintf(stderr, "rocesw replay: cannot write %s\n", evpath);
		rsw_switch_free(sw);
		return 1;
	}
	struct rsw_replay_opts ro = {.until_ns = until, .progress = stderr, .events = ev,
			     .sample_ns = sample};
	rc = rsw_replay_run(sw, in, n_in, out, &ro, &res, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "rocesw replay: %s\n", err);
	if (fclose(ev) != 0 && rc == 0) {
		fprintf(stderr, "rocesw replay: cannot write %s\n", evpath);
		rsw_replay_result_free(&res);
		rc = -1;
	}
	if (rc < 0) {
		rsw_switch_free(sw);
		return 1;
	}
	const struct rsw_fib *fib = rsw_switch_fib(sw);
	json_t *sum = summary_json(fib, &res);
	char path[4096];
	snprintf(path, sizeof(path), "%s/summary.json", out);
	if (json_dump_file(sum, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
		fprintf(stderr, "rocesw replay: cannot write %s\n", path);
		rc = 1;
	}
	json_decref(sum);
	printf("%-12s %10s %12s %10s %12s\n", "port", "rx_packets", "rx_bytes", "tx_packets",
	       "tx_bytes");
	for (uint16_t p = 0; p < fib->n_ports; p++)
		printf("%-12s %10lu %12lu %10lu %12lu\n", fib->ports[p].name,
		       (unsigned long)res.port[p].rx_packets, (unsigned long)res.port[p].rx_bytes,
		       (unsigned long)res.port[p].tx_packets, (unsigned long)res.port[p].tx_bytes);
	for (unsigned d = 1; d < RSW_DROP_COUNT; d++)
		if (res.drops[d])
			printf("drop %-24s %10lu\n", rsw_drop_reason_name(d), (unsigned long)res.drops[d]);
	printf("last departure %.9f s; received %lu = transmitted %lu + dropped %lu + consumed %lu "
	       "+ queued %lu\n", (double)res.end_ns / 1e9, (unsigned long)res.received,
	       (unsigned long)res.transmitted, (unsigned long)res.dropped,
	       (unsigned long)res.consumed, (unsigned long)res.queued);
	rsw_replay_result_free(&res);
	rsw_switch_free(sw);
	return rc;
}
