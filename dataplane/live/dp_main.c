/* rocesw-dataplane [EAL args] -- --config F [--stats-period S] [--stats-json FILE] [--duration S]
 * The live switch: DPDK ports from the config's devargs, one worker per worker lcore. */
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

#include "control/config.h"
#include "dp_ctl.h"
#include "dp_ctx.h"
#include "dp_ports.h"
#include "dp_stats.h"
#include "dp_telemetry.h"
#include "dp_worker.h"

static struct rsw_dp g_dp;

static void on_signal(int sig)
{
	(void)sig;
	g_dp.stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw-dataplane [EAL args] -- --config F [--stats-period S]\n"
		"                        [--stats-json FILE] [--duration S] [--verify-icrc]\n"
		"                        [--control-socket PATH [--control-group G]\n"
		"                        [--control-idle S]]\n"
		"\n"
		"The live switch. Ports come from the devargs of each PORT in F (af_packet, af_xdp,\n"
		"pcap, null, ring, tap, PCI...); every EAL worker lcore (-l) runs one worker, ports\n"
		"shared among them round-robin. Without hugepages pass --no-huge -m 1024 to EAL.\n"
		"\n"
		"  --config F         switch config (docs/config.md); applied at start\n"
		"  --stats-period S   print rx/tx packets per second per port every S seconds\n"
		"  --stats-json FILE  write the final counters as JSON at exit\n"
		"  --duration S       stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --verify-icrc      check the ICRC of every RoCE packet and count ok/bad per port\n"
		"                     (packets are forwarded either way, as a switch does)\n"
		"  --control-socket PATH  serve the control protocol (docs/control.md) on a Unix\n"
		"                     socket, mode 0660: rocesw show/set and roceswd talk to it\n"
		"  --control-group G  group (name or number) allowed on the control socket besides\n"
		"                     root and the dataplane's own user\n"
		"  --control-idle S   disconnect control clients silent for S seconds (default 60;\n"
		"                     16 clients at most)\n"
		"\n"
		"DPDK telemetry (dpdk-telemetry.py) has /rocesw/ports, /rocesw/counters,\n"
		"/rocesw/port_stats,PORT and /rocesw/queue_stats,PORT,Q.\n"
		"\n"
		"On SIGINT/SIGTERM it stops, prints per-port, per-ECMP-member and per-drop-reason\n"
		"counters and checks received = transmitted + dropped + consumed + queued; the exit\n"
		"status is 3 if that does not hold.\n");
}

/* A backlogged port polled late may catch up by this much: a worker the kernel preempts (on a
 * small VM, for the capture tools sharing its core) does not lose its ports' sending time. */
#define SHAPER_SLACK_NS 1000000u

/* Traffic-manager events (watchdog): one line each on stderr, with the time. */
static void log_line(void *arg, const char *line)
{
	(void)arg;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tmv;
	char when[32];
	gmtime_r(&ts.tv_sec, &tmv);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tmv);
	fprintf(stderr, "%s.%03ldZ rocesw-dataplane: %s\n", when, ts.tv_nsec / 1000000, line);
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"stats-period", required_argument, NULL, 'p'},
		{"stats-json", required_argument, NULL, 'j'}, {"duration", required_argument, NULL, 'd'},
		{"verify-icrc", no_argument, NULL, 'v'},
		{"control-socket", required_argument, NULL, 'S'},
		{"control-group", required_argument, NULL, 'G'},
		{"control-idle", required_argument, NULL, 'I'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *json = NULL, *ctl_path = NULL, *ctl_group = NULL;
	double period = 0, duration = 0;
	long idle = RSW_CTL_IDLE_S;
	char err[1024];
	int c;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("rocesw-dataplane %s (%s)\n", RSW_VERSION, rte_version());
			return 0;
		}
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "rocesw-dataplane: EAL: %s\n%s", rte_strerror(rte_errno),
			rsw_dp_eal_hint(argc, argv));
		return 1;
	}
	argc -= n;
	argv += n;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:p:j:d:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v': g_dp.verify_icrc = 1; break;
		case 'c': config = optarg; break;
		case 'p': period = atof(optarg); break;
		case 'j': json = optarg; break;
		case 'd': duration = atof(optarg); break;
		case 'S': ctl_path = optarg; break;
		case 'G': ctl_group = optarg; break;
		case 'I': idle = atol(optarg); break;
		default: usage(stderr); rte_eal_cleanup(); return 2;
		}
	}
	if (!config) {
		fprintf(stderr, "rocesw-dataplane: --config is required\n");
		usage(stderr);
		rte_eal_cleanup();
		return 2;
	}
	struct rsw_dp *dp = &g_dp;
	unsigned lc;
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (dp->n_workers == RSW_DP_MAX_WORKERS)
			break;
		dp->workers[dp->n_workers].index = dp->n_workers;
		dp->workers[dp->n_workers].lcore = lc;
		dp->n_workers++;
	}
	if (dp->n_workers == 0) {
		fprintf(stderr, "rocesw-dataplane: no worker lcore: give EAL at least two, e.g. -l 0-1\n");
		rte_eal_cleanup();
		return 2;
	}
	size_t qsz = rte_rcu_qsbr_get_memsize(dp->n_workers);
	dp->qsbr = rte_zmalloc("rsw_qsbr", qsz, RTE_CACHE_LINE_SIZE);
	if (!dp->qsbr || rte_rcu_qsbr_init(dp->qsbr, dp->n_workers) < 0) {
		fprintf(stderr, "rocesw-dataplane: cannot set up RCU\n");
		return 1;
	}
	dp->sw = rsw_switch_new(dp->qsbr, err, sizeof(err));
	if (!dp->sw || rsw_config_apply(dp->sw, config, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		rte_eal_cleanup();
		return 1;
	}
	for (unsigned w = 0; w < dp->n_workers; w++) {
		dp->workers[w].cnt = rte_zmalloc("rsw_cnt", sizeof(struct rsw_dp_counters),
						 RTE_CACHE_LINE_SIZE);
		dp->workers[w].rnd = 0x9E3779B97F4A7C15ull * (w + 1);
		if (!dp->workers[w].cnt) {
			fprintf(stderr, "rocesw-dataplane: out of memory for counters\n");
			return 1;
		}
	}
	if (rsw_dp_ports_start(dp, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		rte_eal_cleanup();
		return 1;
	}
	rsw_clock_init_tsc(&dp->clock);
	dp->tm = rsw_tm_new("rsw", dp->n_ports, dp->n_workers, rsw_switch_fib(dp->sw),
			    SHAPER_SLACK_NS, err, sizeof(err));
	if (!dp->tm) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		rsw_dp_ports_stop(dp);
		rte_eal_cleanup();
		return 1;
	}
	dp->tm->log = log_line;
	static struct rsw_ctl ctl = {.listen_fd = -1};
	if (ctl_path && rsw_ctl_open(&ctl, dp, ctl_path, ctl_group, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw-dataplane: %s\n", err);
		rsw_dp_ports_stop(dp);
		rte_eal_cleanup();
		return 1;
	}
	ctl.config_path = config;
	if (idle > 0)
		ctl.idle_s = (unsigned)idle;
	rsw_dp_telemetry_register(dp);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rsw_dp_worker_bind(dp);
	for (unsigned w = 0; w < dp->n_workers; w++)
		rte_eal_remote_launch(rsw_dp_worker_main, &dp->workers[w], dp->workers[w].lcore);
	fprintf(stderr, "rocesw-dataplane: %u ports, %u workers, forwarding\n", dp->n_ports,
		dp->n_workers);

	struct rsw_dp_totals prev, cur;
	double t0 = now_s(), last = t0;
	rsw_dp_stats_sum(dp, &prev, 0);
	while (!dp->stop) {
		if (ctl.listen_fd >= 0)
			rsw_ctl_poll(&ctl, 50);
		else
			usleep(50000);
		rsw_switch_reap(dp->sw); /* after the reply: freeing old tables takes a while */
		double t = now_s();
		if (duration > 0 && t - t0 >= duration)
			dp->stop = 1;
		if (period > 0 && t - last >= period) {
			rsw_dp_stats_sum(dp, &cur, 0);
			rsw_dp_stats_print_rates(dp, &cur, &prev, t - last, stdout);
			prev = cur;
			last = t;
		}
	}
	rte_eal_mp_wait_lcore();
	rsw_ctl_close(&ctl);
	/* the queues are drained by the workers' last rounds; what is left counts as queued */
	rsw_dp_stats_sum(dp, &cur, rsw_dp_queued(dp));
	rsw_dp_stats_print_final(dp, &cur, stdout);
	int status = 0;
	if (json && rsw_dp_stats_write_json(dp, &cur, json) < 0) {
		fprintf(stderr, "rocesw-dataplane: cannot write %s\n", json);
		status = 1;
	}
	if (cur.received != cur.transmitted + cur.dropped + cur.consumed + cur.queued)
		status = 3;
	rsw_dp_ports_stop(dp);
	rsw_tm_free(dp->tm);
	for (unsigned w = 0; w < dp->n_workers; w++)
		rte_free(dp->workers[w].cnt);
	rsw_switch_free(dp->sw);
	rte_free(dp->qsbr);
	rte_eal_cleanup();
	return status;
}
