/* `rocesw show WHAT`: what a running dataplane has and counts, over its control socket. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_table.h"
#include "cmd.h"
#include "ctl_client.h"

#define U(o, k) ((unsigned long long)json_integer_value(json_object_get((o), (k))))
#define S(o, k) (json_string_value(json_object_get((o), (k))) ?: "")

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw show counters|ports|queues|buffers|pfc|watchdog|routes|ecmp|ars|config|\n"
		"                   control|arp|ndp|deadlock|trace\n"
		"                   [--switch NAME] [--json] [--socket PATH]\n"
		"       rocesw show pfc --deadlock   (the same as show deadlock)\n"
		"\n"
		"Asks a running rocesw-dataplane over its control socket (--socket, else $ROCESW_SOCKET,\n"
		"else " RSW_CTL_DEFAULT_SOCKET "). Counter names are SAI's (SAI_PORT_STAT_PFC_*,\n"
		"SAI_QUEUE_STAT_*, SAI_INGRESS_PRIORITY_GROUP_STAT_*, SAI_BUFFER_POOL_STAT_*,\n"
		"SAI_NEXT_HOP_GROUP_ATTR_ARS_*) and SONiC's PFC_WD_QUEUE_STATS_*. --json prints the reply as is (docs/control.md).\n"
		"A dataplane running a zone (--zone) answers for the switch --switch names; without\n"
		"it, counters are printed for every switch.\n"
		"arp / ndp: the neighbours, configured (static) and learnt from ARP / ND (dynamic);\n"
		"--json adds their ages and the ARP/ND counters.\n"
		"deadlock: on a zone, each cycle of paused queues each waiting on the next (a PFC\n"
		"deadlock), in order, how long it has held and the PFC watchdog of its queues.\n"
		"trace: what the workers traced since `rocesw trace add N` (rocesw trace --help).\n");
}

/* `show interfaces counters`-like, then the drops by reason and the conservation line. */
static void print_counters(json_t *r)
{
	static const char *const hdr[] = {"IFACE", "RX_OK", "RX_BYTES", "TX_OK", "TX_BYTES",
					  "PFC_RX"};
	struct rsw_cli_table *t = rsw_cli_table_new(6, hdr);
	json_t *p, *v;
	size_t i;
	const char *k;
	json_array_foreach(json_object_get(r, "ports"), i, p) {
		rsw_cli_table_cell(t, "%s", S(p, "name"));
		rsw_cli_table_num(t, U(p, "rx_packets"));
		rsw_cli_table_num(t, U(p, "rx_bytes"));
		rsw_cli_table_num(t, U(p, "tx_packets"));
		rsw_cli_table_num(t, U(p, "tx_bytes"));
		rsw_cli_table_num(t, U(p, "pfc_rx_frames"));
	}
	rsw_cli_table_print(t, stdout, "No ports.");
	static const char *const dhdr[] = {"Drop reason", "Packets"};
	t = rsw_cli_table_new(2, dhdr);
	json_object_foreach(json_object_get(r, "drops"), k, v)
		if (json_integer_value(v)) {
			rsw_cli_table_cell(t, "%s", k);
			rsw_cli_table_num(t, (unsigned long long)json_integer_value(v));
		}
	printf("\n");
	rsw_cli_table_print(t, stdout, "No drops.");
	json_t *c = json_object_get(r, "conservation");
	printf("\nreceived %llu = transmitted %llu + dropped %llu + consumed %llu + queued %llu: %s\n",
	       U(c, "received"), U(c, "transmitted"), U(c, "dropped"), U(c, "consumed"),
	       U(c, "queued"), json_is_true(json_object_get(c, "holds")) ? "holds" : "not yet");
}

static void print_ports(json_t *r)
{
	static const char *const hdr[] = {"Interface", "Alias", "Role", "Admin", "Speed",
					  "RX_OK", "TX_OK"};
	struct rsw_cli_table *t = rsw_cli_table_new(7, hdr);
	json_t *p;
	size_t i;
	json_array_foreach(r, i, p) {
		rsw_cli_table_cell(t, "%s", S(p, "name"));
		rsw_cli_table_cell(t, "%s", S(p, "alias"));
		rsw_cli_table_cell(t, "%s", S(p, "role"));
		rsw_cli_table_cell(t, "%s", S(p, "admin_status"));
		if (U(p, "speed") % 1000)
			rsw_cli_table_cell(t, "%lluM", U(p, "speed"));
		else
			rsw_cli_table_cell(t, "%lluG", U(p, "speed") / 1000);
		rsw_cli_table_num(t, U(p, "rx_packets"));
		rsw_cli_table_num(t, U(p, "tx_packets"));
	}
	rsw_cli_table_print(t, stdout, "No ports.");
}

static void print_flat(json_t *o, const char *indent)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		if (json_is_object(v)) {
			printf("%s%s:\n", indent, k);
			print_flat(v, "  ");
		} else if (json_is_string(v)) {
			printf("%s%s: %s\n", indent, k, json_string_value(v));
		} else if (json_is_integer(v) || json_is_boolean(v)) {
			printf("%s%s: %lld\n", indent, k,
			       json_is_boolean(v) ? (long long)json_is_true(v)
						  : (long long)json_integer_value(v));
		}
	}
}

/* `show queue counters`: every queue of every port, zeros included. */
static void print_queues(json_t *r)
{
	static const char *const hdr[] = {"Port", "TxQ", "Counter/pkts", "Counter/bytes",
					  "Drop/pkts", "Drop/bytes", "ECN/pkts", "WM/bytes"};
	struct rsw_cli_table *t = rsw_cli_table_new(8, hdr);
	json_t *p, *q;
	size_t i, j;
	json_array_foreach(r, i, p)
		json_array_foreach(json_object_get(p, "queues"), j, q) {
			rsw_cli_table_cell(t, "%s", S(p, "name"));
			rsw_cli_table_cell(t, "UC%llu", U(q, "queue"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_PACKETS"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_BYTES"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_DROPPED_PACKETS"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_DROPPED_BYTES"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"));
			rsw_cli_table_num(t, U(q, "SAI_QUEUE_STAT_WATERMARK_BYTES"));
		}
	rsw_cli_table_print(t, stdout, "No queues.");
}

/* `show pfcwd stats`: a row per queue, storms detected/restored and what the watchdog dropped. */
static void print_watchdog(json_t *r)
{
	static const char *const hdr[] = {"QUEUE", "STATUS", "STORM DETECTED/RESTORED",
					  "TX DROP"};
	struct rsw_cli_table *t = rsw_cli_table_new(4, hdr);
	json_t *p, *q;
	size_t i, j;
	json_array_foreach(r, i, p)
		json_array_foreach(json_object_get(p, "queues"), j, q) {
			unsigned long long det = U(q, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"),
					   res = U(q, "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED");
			rsw_cli_table_cell(t, "%s:%llu", S(p, "name"), U(q, "queue"));
			rsw_cli_table_cell(t, "%s", det > res ? "stormed" : "operational");
			rsw_cli_table_cell(t, "%llu/%llu", det, res);
			rsw_cli_table_num(t, U(q, "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS"));
		}
	rsw_cli_table_print(t, stdout, "No queues.");
}

/* A port per row, one column per priority (or PG) 0-7 from the counter named fmt % i under the
 * port's object `obj` (or under each element of the array `obj`, indexed by `index`). */
static void print_per_prio(json_t *r, const char *first, const char *col, const char *obj,
			   const char *fmt, const char *index)
{
	char h[8][8];
	const char *hdr[9] = {first};
	for (unsigned i = 0; i < 8; i++) {
		snprintf(h[i], sizeof(h[i]), "%s%u", col, i);
		hdr[i + 1] = h[i];
	}
	struct rsw_cli_table *t = rsw_cli_table_new(9, hdr);
	json_t *p;
	size_t i;
	json_array_foreach(r, i, p) {
		rsw_cli_table_cell(t, "%s", S(p, "name"));
		json_t *o = json_object_get(p, obj);
		for (unsigned k = 0; k < 8; k++) {
			char key[96];
			snprintf(key, sizeof(key), fmt, k);
			json_t *from = index ? json_array_get(o, k) : o;
			if (index && U(from, index) != k)
				from = NULL;
			rsw_cli_table_num(t, from ? U(from, key) : 0);
		}
	}
	rsw_cli_table_print(t, stdout, "No ports.");
}

/* `show pfc counters`: frames received and sent per priority. */
static void print_pfc(json_t *r)
{
	print_per_prio(r, "Port Rx", "PFC", "pfc", "SAI_PORT_STAT_PFC_%u_RX_PKTS", NULL);
	printf("\n");
	print_per_prio(r, "Port Tx", "PFC", "pfc", "SAI_PORT_STAT_PFC_%u_TX_PKTS", NULL);
}

/* `show pfc --deadlock`: per cycle, its queues in wait order, each waiting on the next and the
 * last on the first, with the watchdog's action, status and counters (show pfcwd stats). */
static void print_deadlock(json_t *r)
{
	static const char *const hdr[] = {"#", "QUEUE", "PEER", "PAUSED/ms", "QUEUED/pkts",
					  "QUEUED/bytes", "WD ACTION", "WD STATUS",
					  "STORM DETECTED/RESTORED", "TX DROP"};
	json_t *d, *m, *dls = json_object_get(r, "deadlocks");
	size_t i, j;
	printf("Paused queues: %llu, deadlocks: %zu\n", U(r, "paused_queues"), json_array_size(dls));
	json_array_foreach(dls, i, d) {
		json_t *cyc = json_object_get(d, "cycle");
		printf("\nDeadlock %zu: %zu queues, held %.3f ms\n", i + 1, json_array_size(cyc),
		       (double)U(d, "held_us") / 1000);
		struct rsw_cli_table *t = rsw_cli_table_new(10, hdr);
		json_array_foreach(cyc, j, m) {
			json_t *w = json_object_get(m, "pfcwd");
			rsw_cli_table_num(t, j + 1);
			rsw_cli_table_cell(t, "%s|%s:%llu", S(m, "switch"), S(m, "port"),
					   U(m, "priority"));
			rsw_cli_table_cell(t, "%s|%s", S(m, "peer_switch"), S(m, "peer_port"));
			rsw_cli_table_cell(t, "%.3f", (double)U(m, "paused_us") / 1000);
			rsw_cli_table_num(t, U(m, "queued_frames"));
			rsw_cli_table_num(t, U(m, "queued_bytes"));
			rsw_cli_table_cell(t, "%s", S(w, "action"));
			rsw_cli_table_cell(t, "%s", S(w, "status"));
			rsw_cli_table_cell(t, "%llu/%llu", U(w, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"),
					   U(w, "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"));
			rsw_cli_table_num(t, U(w, "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS"));
		}
		rsw_cli_table_print(t, stdout, "");
	}
}

static void print_routes(json_t *r)
{
	static const char *const hdr[] = {"Prefix", "In port", "Next hop", "Origin"};
	struct rsw_cli_table *t = rsw_cli_table_new(4, hdr);
	json_t *o;
	size_t i;
	json_array_foreach(r, i, o) {
		rsw_cli_table_cell(t, "%s", S(o, "prefix"));
		rsw_cli_table_cell(t, "%s", json_object_get(o, "in_port") ? S(o, "in_port") : "any");
		const char *backup = json_object_get(o, "backup_group") ? S(o, "backup_group") : NULL;
		if (json_object_get(o, "nexthop"))
			rsw_cli_table_cell(t, "%s%s%s", S(o, "nexthop"), backup ? ", backup " : "",
					   backup ? backup : "");
		else if (json_object_get(o, "nexthop_group"))
			rsw_cli_table_cell(t, "group %s%s%s", S(o, "nexthop_group"),
					   backup ? ", backup " : "", backup ? backup : "");
		else
			rsw_cli_table_cell(t, "blackhole");
		rsw_cli_table_cell(t, "%s", S(o, "origin"));
	}
	rsw_cli_table_print(t, stdout, "No routes.");
}

static void print_ecmp(json_t *r)
{
	json_t *g, *m;
	size_t i, j;
	if (!json_array_size(r))
		printf("No ECMP groups.\n");
	json_array_foreach(r, i, g) {
		printf("%sGroup %s: hash policy %s, %llu buckets%s\n", i ? "\n" : "", S(g, "name"),
		       S(g, "hash_policy"), U(g, "buckets"),
		       json_is_true(json_object_get(g, "resilient")) ? ", resilient" : "");
		static const char *const hdr[] = {"Member", "Nexthop", "Port", "Buckets", "Packets"};
		struct rsw_cli_table *t = rsw_cli_table_new(5, hdr);
		json_array_foreach(json_object_get(g, "members"), j, m) {
			rsw_cli_table_num(t, U(m, "member"));
			rsw_cli_table_cell(t, "%s", S(m, "nexthop"));
			rsw_cli_table_cell(t, "%s", S(m, "port"));
			rsw_cli_table_num(t, U(m, "buckets"));
			rsw_cli_table_num(t, U(m, "packets"));
		}
		rsw_cli_table_print(t, stdout, "(no active member)");
	}
}

/* `show ars`: a row per ARS next-hop group, its mode and the SAI counters (docs/ars.md). */
static void print_ars(json_t *r)
{
	static const char *const hdr[] = {"Group", "Object", "Mode", "Idle/us", "Flows",
					  "Packets", "NH reassign", "Port reassign", "Drops",
					  "Table full"};
	struct rsw_cli_table *t = rsw_cli_table_new(10, hdr);
	json_t *g;
	size_t i;
	json_array_foreach(r, i, g) {
		rsw_cli_table_cell(t, "%s", S(g, "group"));
		rsw_cli_table_cell(t, "%s", S(g, "object"));
		rsw_cli_table_cell(t, "%s", S(g, "mode"));
		rsw_cli_table_num(t, U(g, "flowlet_idle_time"));
		rsw_cli_table_num(t, U(g, "max_flows"));
		rsw_cli_table_num(t, U(g, "RSW_ARS_PACKETS"));
		rsw_cli_table_num(t, U(g, "SAI_NEXT_HOP_GROUP_ATTR_ARS_NEXT_HOP_REASSIGNMENTS"));
		rsw_cli_table_num(t, U(g, "SAI_NEXT_HOP_GROUP_ATTR_ARS_PORT_REASSIGNMENTS"));
		rsw_cli_table_num(t, U(g, "SAI_NEXT_HOP_GROUP_ATTR_ARS_PACKET_DROPS"));
		rsw_cli_table_num(t, U(g, "RSW_ARS_FLOWLET_TABLE_FULL"));
	}
	rsw_cli_table_print(t, stdout, "No ARS groups.");
}

/* The pools (`show buffer_pool watermark`) and per PG the shared watermark and drops
 * (`show priority-group watermark shared`, `show priority-group drop counters`). */
static void print_buffers(json_t *r)
{
	static const char *const hdr[] = {"Pool", "Size", "Used/bytes", "WM/bytes"};
	struct rsw_cli_table *t = rsw_cli_table_new(4, hdr);
	json_t *p;
	size_t i;
	json_array_foreach(json_object_get(r, "pools"), i, p) {
		rsw_cli_table_cell(t, "%s", S(p, "name"));
		rsw_cli_table_num(t, U(p, "size"));
		rsw_cli_table_num(t, U(p, "SAI_BUFFER_POOL_STAT_CURR_OCCUPANCY_BYTES"));
		rsw_cli_table_num(t, U(p, "SAI_BUFFER_POOL_STAT_WATERMARK_BYTES"));
	}
	rsw_cli_table_print(t, stdout, "No buffer pools.");
	json_t *ports = json_object_get(r, "ports");
	printf("\nIngress shared pool occupancy per PG (watermark, bytes):\n");
	print_per_prio(ports, "Port", "PG", "priority_groups",
		       "SAI_INGRESS_PRIORITY_GROUP_STAT_WATERMARK_BYTES", "pg");
	printf("\nIngress PG dropped packets:\n");
	print_per_prio(ports, "Port", "PG", "priority_groups",
		       "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS", "pg");
}

/* `show arp` / `show ndp` as SONiC prints them (Address, MacAddress, Iface, Vlan; ndp adds
 * Status), with where each entry came from, and the entry count. */
static void print_neigh(json_t *r, int ndp)
{
	static const char *const hdr[] = {"Address", "MacAddress", "Iface", "Vlan", "Type", "Status"};
	struct rsw_cli_table *t = rsw_cli_table_new(ndp ? 6 : 5, hdr);
	json_t *o, *entries = json_object_get(r, "entries");
	size_t i;
	json_array_foreach(entries, i, o) {
		int dyn = !strcmp(S(o, "type"), "dynamic");
		rsw_cli_table_cell(t, "%s", S(o, "address"));
		rsw_cli_table_cell(t, "%s", S(o, "mac"));
		rsw_cli_table_cell(t, "%s", S(o, "port"));
		rsw_cli_table_cell(t, "-");
		rsw_cli_table_cell(t, "%s", S(o, "type"));
		if (ndp)
			rsw_cli_table_cell(t, "%s", dyn ? "REACHABLE" : "PERMANENT");
	}
	rsw_cli_table_print(t, stdout, "No entries.");
	printf("Total number of entries %zu\n", json_array_size(entries));
}

static void print_arp(json_t *r)
{
	print_neigh(r, 0);
}

static void print_ndp(json_t *r)
{
	print_neigh(r, 1);
}

/* A zone's counters: each switch's in turn. */
static void print_zone_counters(json_t *r)
{
	json_t *one;
	size_t i;
	json_array_foreach(json_object_get(r, "switches"), i, one) {
		printf("%s== %s\n", i ? "\n" : "", S(one, "name"));
		print_counters(one);
	}
}

/* How each show target prints as a table; the others print as flat keys and values. */
static const struct {
	const char *what;
	void (*print)(json_t *r);
} show_printers[] = {
	{"counters", print_counters},
	{"ports", print_ports},
	{"queues", print_queues},
	{"watchdog", print_watchdog},
	{"pfc", print_pfc},
	{"routes", print_routes},
	{"ecmp", print_ecmp},
	{"ars", print_ars},
	{"buffers", print_buffers},
	{"arp", print_arp},
	{"ndp", print_ndp},
	{"deadlock", print_deadlock},
	{"trace", rsw_print_trace},
};

static void print_reply(const char *what, json_t *r)
{
	if (!strcmp(what, "counters") && json_object_get(r, "zone")) {
		print_zone_counters(r);
		return;
	}
	for (size_t k = 0; k < sizeof(show_printers) / sizeof(show_printers[0]); k++)
		if (!strcmp(what, show_printers[k].what)) {
			show_printers[k].print(r);
			return;
		}
	print_flat(r, "");
}

int rsw_cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'}, {"socket", required_argument, NULL, 's'},
		{"switch", required_argument, NULL, 'w'},
		{"deadlock", no_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *sock = NULL, *sw = NULL;
	int json = 0, deadlock = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': sock = optarg; break;
		case 'w': sw = optarg; break;
		case 'd': deadlock = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *what = argv[optind];
	if (deadlock && strcmp(what, "pfc")) {
		fprintf(stderr, "rocesw show: --deadlock goes with pfc (rocesw show pfc --deadlock)\n");
		return 2;
	}
	if (deadlock)
		what = "deadlock";
	char err[1024];
	/* the workers' trace has an op of its own (rocesw trace) */
	json_t *req = !strcmp(what, "trace") ? json_pack("{s:s}", "op", "trace_show")
					     : json_pack("{s:s, s:s}", "op", "show", "what", what);
	if (sw)
		json_object_set_new(req, "switch", json_string(sw));
	json_t *r = rsw_ctl_call(rsw_ctl_socket_path(sock), req, err, sizeof(err));
	json_decref(req);
	if (!r) {
		fprintf(stderr, "rocesw show: %s\n", err);
		return 1;
	}
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	} else {
		print_reply(what, r);
	}
	json_decref(r);
	return 0;
}
