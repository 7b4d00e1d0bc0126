/* rocesw-dataplane [EAL args] -- --config F | --zone Z [--stats-period S] [--stats-json FILE]
 * [--duration S] ...
 * The live switch, or every switch of a zone in one process: DPDK ports from the configs'
 * devargs (or the zone's hosts), in-memory links between a zone's switches, the ports spread
 * over the worker lcores. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_version.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "dataplane/config/config.h"
#include "dp_ctl.h"
#include "dp_ctx.h"
#include "dp_neigh.h"
#include "dp_ports.h"
#include "dp_priv.h"
#include "dp_stats.h"
#include "dp_telemetry.h"
#include "dp_worker.h"
#include "dp_zone.h"

static struct rsw_dp_zone g_zone;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&g_zone.stop, 1, __ATOMIC_RELAXED);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw-dataplane [EAL args] -- --config F | --zone Z [--stats-period S]\n"
		"                        [--stats-json FILE] [--duration S] [--verify-icrc]\n"
		"                        [--mbufs N] [--neigh-timeout S] [--rxq N]\n"
		"                        [--control-socket PATH [--control-group G]\n"
		"                        [--control-readonly-group G] [--control-idle S]]\n"
		"                        [--user NAME]\n"
		"\n"
		"The live switch. Ports come from the devargs of each PORT in F (af_packet, af_xdp,\n"
		"pcap, null, ring, tap, PCI...); every EAL worker lcore (-l) runs one worker, ports\n"
		"shared among them round-robin. Without hugepages pass --no-huge -m 1024 to EAL\n"
		"(-m 2048 for a zone: each switch has its own tables).\n"
		"\n"
		"  --config F         switch config (docs/config.md); applied at start\n"
		"  --zone Z           a zone config (docs/replay.md): every switch of Z in this\n"
		"                     process, each with its own tables, traffic manager and\n"
		"                     counters; links between switches are in memory at their speed\n"
		"                     and delay; a host's link is the DPDK port of its devargs in\n"
		"                     HOST, else af_packet on the veth rsw-HOST (scripts/lab.py)\n"
		"  --mbufs N          packet memory in frames (default: from the ports)\n"
		"  --rxq N            N RX queues on every DPDK port (default 1), RSS on IP/UDP/TCP\n"
		"                     where the device hashes (NICs, null), PACKET_FANOUT_HASH on\n"
		"                     af_packet (qpairs=N added), one rx_pcap per queue on pcap; a\n"
		"                     port's queues go to different workers, its egress stays with\n"
		"                     queue 0's worker; a flow stays on one queue, so in order\n"
		"  --pin SWITCH=W     (zone) every port of SWITCH on worker W (0 = the second EAL\n"
		"                     lcore); repeatable; other switches' ports go round-robin\n"
		"  --idle-sleep-us U  a worker with nothing to do pauses, then sleeps from 1 us\n"
		"                     doubling up to U (default 50) while none of its ports holds a\n"
		"                     frame; 0: never sleep (lowest latency, one core per worker)\n"
		"  --stats-period S   print rx/tx packets per second per port every S seconds\n"
		"  --stats-json FILE  write the final counters as JSON at exit\n"
		"  --duration S       stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --neigh-timeout S  a learnt neighbour (ARP/ND) nothing refreshed for S seconds is\n"
		"                     removed; it is probed from S/2 (default 300; 0: never)\n"
		"  --verify-icrc      check the ICRC of every RoCE packet and count ok/bad per port\n"
		"                     (packets are forwarded either way, as a switch does)\n"
		"  --control-socket PATH  serve the control protocol (docs/control.md) on a Unix\n"
		"                     socket, mode 0660: rocesw show/set and roceswd talk to it\n"
		"  --control-group G  group (name or number) allowed on the control socket besides\n"
		"                     root and the dataplane's own user\n"
		"  --control-readonly-group G  group whose members may only read (hello, show,\n"
		"                     hash_explain): a request that changes the switch is refused\n"
		"  --control-idle S   disconnect control clients silent for S seconds (default 60;\n"
		"                     16 clients at most)\n"
		"  --user NAME        once ports, memory and the control socket are open, run as\n"
		"                     NAME (not root) for good: no capability kept but\n"
		"                     CAP_NET_ADMIN for af_xdp/tap ports, in the main thread only\n"
		"                     (to undo at exit what they did to the interfaces);\n"
		"                     --stats-json is then written as NAME (docs/security.md)\n"
		"\n"
		"DPDK telemetry (dpdk-telemetry.py) has /rocesw/ports, /rocesw/counters,\n"
		"/rocesw/port_stats,PORT and /rocesw/queue_stats,PORT,Q.\n"
		"\n"
		"On SIGINT/SIGTERM it stops, prints per-port, per-ECMP-member and per-drop-reason\n"
		"counters and checks received = transmitted + dropped + consumed + queued; the exit\n"
		"status is 3 if that does not hold.\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The usual cause of an EAL start failure, which DPDK reports only as an errno. */
static const char *rsw_dp_eal_hint(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--no-huge"))
			return "";
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long total = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Total: %ld", &total) == 1)
			break;
	if (f)
		fclose(f);
	if (total == 0)
		return "rocesw-dataplane: no hugepages are reserved on this machine: pass --no-huge -m 1024 "
		       "to EAL, or reserve some (docs/dataplane.md)\n";
	return "";
}

/* Totals of every switch; a zone's switches are printed one after the other. */
static void sum_all(const struct rsw_dp_zone *z, struct rsw_dp_totals *t, int final)
{
	for (unsigned s = 0; s < z->n_sw; s++)
		rsw_dp_stats_sum(z->dp[s], &t[s], final ? rsw_dp_queued(z->dp[s]) : 0);
}

static void print_rates(const struct rsw_dp_zone *z, const struct rsw_dp_totals *cur,
			const struct rsw_dp_totals *prev, double s)
{
	for (unsigned i = 0; i < z->n_sw; i++) {
		if (z->dp[i]->name)
			printf("== %s\n", z->dp[i]->name);
		rsw_dp_stats_print_rates(z->dp[i], &cur[i], &prev[i], s, stdout);
	}
}

/* Final counters; returns 1 if some switch's conservation check fails. */
static int print_final(const struct rsw_dp_zone *z, const struct rsw_dp_totals *t, uint64_t in_flight)
{
	int bad = 0;
	for (unsigned s = 0; s < z->n_sw; s++) {
		if (z->dp[s]->name)
			printf("== switch %s\n", z->dp[s]->name);
		rsw_dp_stats_print_final(z->dp[s], &t[s], stdout);
		bad |= t[s].received != t[s].transmitted + t[s].dropped + t[s].consumed + t[s].queued;
	}
	if (z->model)
		printf("zone %s: %lu frames still on in-memory links\n", z->name,
		       (unsigned long)in_flight);
	return bad;
}

/* What the command line asked for after the EAL's arguments. */
struct dp_args {
	struct rsw_dp_zone_opts zo; /* with --config or --zone */
	const char *json, *ctl_path, *ctl_group, *ctl_ro_group, *user;
	double period, duration;
	long idle;
};

/* The options whose value is checked: 0, or -1 after saying what was expected. */
static int take_checked_option(struct rsw_dp_zone_opts *zo, int c, char *arg)
{
	char *end;
	if (c == 'i') {
		double us = strtod(arg, &end);
		if (*end || end == arg || us < 0 || us > 1000000) {
			fprintf(stderr, "rocesw-dataplane: --idle-sleep-us: expected 0 to 1000000 "
				"microseconds, got '%s'\n", arg);
			return -1;
		}
		zo->idle_max_ns = (uint64_t)(us * 1000);
	} else if (c == 'N') {
		unsigned long t = strtoul(arg, &end, 10);
		if (*end || end == arg || arg[0] == '-' || t > 86400 * 365) {
			fprintf(stderr, "rocesw-dataplane: --neigh-timeout: expected seconds "
				"(0 to 31536000), got '%s'\n", arg);
			return -1;
		}
		zo->neigh_timeout_s = (unsigned)t;
	} else if (c == 'P') {
		char *eq = strchr(arg, '=');
		unsigned long w = eq ? strtoul(eq + 1, &end, 10) : 0;
		if (!eq || eq == arg || !eq[1] || *end || zo->n_pin == RSW_ZONE_MAX_SWITCHES) {
			fprintf(stderr, "rocesw-dataplane: --pin: expected SWITCH=WORKER (a worker "
				"number from 0), got '%s'\n", arg);
			return -1;
		}
		*eq = 0;
		zo->pin[zo->n_pin].sw = arg;
		zo->pin[zo->n_pin++].worker = (unsigned)w;
	} else if (c == 'Q') {
		unsigned long q = strtoul(arg, &end, 10);
		if (*end || end == arg || arg[0] == '-' || q < 1 || q > RSW_DP_MAX_RXQ) {
			fprintf(stderr, "rocesw-dataplane: --rxq: expected 1 to %u RX queues per "
				"port, got '%s'\n", RSW_DP_MAX_RXQ, arg);
			return -1;
		}
		zo->rxq = (unsigned)q;
	}
	return 0;
}

/* Returns 0, or -1 after saying what was wrong. */
static int parse_args(int argc, char **argv, struct dp_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"stats-period", required_argument, NULL, 'p'},
		{"stats-json", required_argument, NULL, 'j'}, {"duration", required_argument, NULL, 'd'},
		{"verify-icrc", no_argument, NULL, 'v'}, {"zone", required_argument, NULL, 'z'},
		{"mbufs", required_argument, NULL, 'm'}, {"pin", required_argument, NULL, 'P'},
		{"idle-sleep-us", required_argument, NULL, 'i'},
		{"neigh-timeout", required_argument, NULL, 'N'},
		{"control-socket", required_argument, NULL, 'S'},
		{"control-group", required_argument, NULL, 'G'},
		{"control-idle", required_argument, NULL, 'I'},
		{"control-readonly-group", required_argument, NULL, 'R'},
		{"user", required_argument, NULL, 'u'},
		{"rxq", required_argument, NULL, 'Q'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct rsw_dp_zone_opts *zo = &a->zo;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:j:d:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v': zo->verify_icrc = 1; break;
		case 'c': zo->config = optarg; break;
		case 'z': zo->zone = optarg; break;
		case 'm': zo->mbufs = (unsigned)atol(optarg); break;
		case 'i':
		case 'N':
		case 'P':
		case 'Q':
			if (take_checked_option(zo, c, optarg) < 0)
				return -1;
			break;
		case 'p': a->period = atof(optarg); break;
		case 'j': a->json = optarg; break;
		case 'd': a->duration = atof(optarg); break;
		case 'S': a->ctl_path = optarg; break;
		case 'G': a->ctl_group = optarg; break;
		case 'I': a->idle = atol(optarg); break;
		case 'R': a->ctl_ro_group = optarg; break;
		case 'u': a->user = optarg; break;
		default: usage(stderr); return -1;
		}
	}
	if (!zo->config == !zo->zone) {
		fprintf(stderr, "rocesw-dataplane: give one of --config F or --zone Z\n");
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Everything that needs root is open: from here on the process is `u` (dp_priv.h). */
static int drop(const struct rsw_dp_zone *z, const struct rsw_dp_user *u)
{
	char err[512], why[256], names[128];
	uint64_t keep = rsw_dp_priv_needed(z, why, sizeof(why));
	if (rsw_dp_priv_drop(u, keep, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		return -1;
	}
	rsw_dp_priv_names(keep, names, sizeof(names));
	fprintf(stderr, "rocesw-dataplane: running as %s (uid %u, gid %u); capabilities kept: "
		"%s%s\n", u->name, (unsigned)u->uid, (unsigned)u->gid, names, why);
	return 0;
}

/* The switches, their ports and the control socket, then the workers. Returns 0, or -1 after
 * saying what failed. */
static int start(struct rsw_dp_zone *z, struct rsw_ctl *ctl, const struct dp_args *a)
{
	char err[1024];
	struct rsw_dp_user user;
	if ((a->user && rsw_dp_user_lookup(a->user, &user, err, sizeof(err)) < 0) ||
	    rsw_dp_zone_open(z, &a->zo, err, sizeof(err)) < 0 ||
	    (a->ctl_path &&
	     rsw_ctl_open(ctl, z->dp[0], a->ctl_path, a->ctl_group, a->ctl_ro_group, err,
			  sizeof(err)) < 0)) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		return -1;
	}
	/* owned by the user it becomes: roceswd, which runs as that user too, reaches it without
	 * being in the control group (docs/security.md "roceswd's privileges") */
	if (a->user && a->ctl_path && lchown(a->ctl_path, user.uid, (gid_t)-1) < 0) {
		fprintf(stderr, "rocesw-dataplane: --control-socket %s: %s\n", a->ctl_path,
			strerror(errno));
		return -1;
	}
	ctl->zone = z;
	ctl->config_path = z->config[0];
	ctl->log = rsw_dp_log_line;
	if (a->idle > 0)
		ctl->idle_s = (unsigned)a->idle;
	rsw_dp_telemetry_register(z);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (a->user && drop(z, &user) < 0)
		return -1;
	rsw_dp_zone_launch(z);
	unsigned n_ports = 0;
	for (unsigned s = 0; s < z->n_sw; s++)
		n_ports += z->dp[s]->n_ports;
	if (z->model)
		fprintf(stderr, "rocesw-dataplane: zone %s: %u switches, %u ports, %u links, "
			"%u workers, forwarding\n", z->name, z->n_sw, n_ports, z->n_links / 2,
			z->n_workers);
	else
		fprintf(stderr, "rocesw-dataplane: %u ports, %u workers, forwarding\n", n_ports,
			z->n_workers);
	return 0;
}

static struct rsw_dp_totals prev[RSW_ZONE_MAX_SWITCHES], cur[RSW_ZONE_MAX_SWITCHES];

/* The main lcore until a signal or --duration: the control socket, neighbours, old tables and
 * the rates every --stats-period. */
static void serve(struct rsw_dp_zone *z, struct rsw_ctl *ctl, const struct dp_args *a)
{
	double t0 = now_s(), last = t0;
	sum_all(z, prev, 0);
	while (!__atomic_load_n(&z->stop, __ATOMIC_RELAXED)) {
		/* 10 ms: how long an ARP/ND request or a ping to the switch waits at most */
		if (ctl->listen_fd >= 0)
			rsw_ctl_poll(ctl, 10);
		else
			usleep(10000);
		for (unsigned s = 0; s < z->n_sw; s++)
			rsw_dp_neigh_poll(z->dp[s]);
		for (unsigned s = 0; s < z->n_sw; s++)
			rsw_switch_reap(z->dp[s]->sw); /* after the reply: freeing old tables is slow */
		double t = now_s();
		if (a->duration > 0 && t - t0 >= a->duration)
			__atomic_store_n(&z->stop, 1, __ATOMIC_RELAXED);
		if (a->period > 0 && t - last >= a->period) {
			sum_all(z, cur, 0);
			print_rates(z, cur, prev, t - last);
			memcpy(prev, cur, z->n_sw * sizeof(*prev)); /* not the whole array: 1024 switches */
			last = t;
		}
	}
}

/* Waits for the workers and prints the final counters. Returns the exit status. */
static int finish(struct rsw_dp_zone *z, struct rsw_ctl *ctl, const struct dp_args *a)
{
	rsw_dp_zone_wait(z);
	rsw_ctl_close(ctl);
	/* the queues are drained by the workers' last rounds; what is left counts as queued */
	sum_all(z, cur, 1);
	uint64_t in_flight = rsw_dp_zone_in_flight(z);
	int status = print_final(z, cur, in_flight) ? 3 : 0;
	char err[1024];
	if (a->json && rsw_dp_zone_stats_write_json(z, cur, a->json, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		if (!status)
			status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	static struct rsw_ctl ctl = {.listen_fd = -1};
	struct rsw_dp_zone *z = &g_zone;
	struct dp_args a = {.idle = RSW_CTL_IDLE_S,
			    .zo = {.idle_max_ns = RSW_DP_IDLE_MAX_NS,
				   .neigh_timeout_s = RSW_DP_NEIGH_TIMEOUT_S}};

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("rocesw-dataplane %s (%s)\n", RSW_VERSION, rte_version());
			return 0;
		}
	/* --user: limits that EAL's threads, started next, inherit (dp_priv.h) */
	for (int i = 1, app = 0; i < argc; i++) {
		app |= !strcmp(argv[i], "--");
		char err[256];
		if (app && !strcmp(argv[i], "--user") && rsw_dp_priv_early(err, sizeof(err)) < 0) {
			fprintf(stderr, "rocesw-dataplane: %s\n", err);
			return 1;
		}
	}
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "rocesw-dataplane: EAL: %s\n%s", rte_strerror(rte_errno),
			rsw_dp_eal_hint(argc, argv));
		return 1;
	}
	if (parse_args(argc - n, argv + n, &a) < 0) {
		rte_eal_cleanup();
		return 2;
	}
	int status = 1;
	if (start(z, &ctl, &a) == 0) {
		serve(z, &ctl, &a);
		status = finish(z, &ctl, &a);
	}
	rsw_dp_zone_close(z);
	rte_eal_cleanup();
	return status;
}
