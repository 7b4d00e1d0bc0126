/* `rocesw replay`: captures through one switch or a zone on virtual time (dataplane/replay). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "collective_spec.h"
#include "replay_te.h"
#include "dataplane/config/config.h"
#include "dataplane/config/whole_file.h"
#include "dataplane/replay/replay.h"
#include "capture_opts.h"
#include "eal_quiet.h"
#include "replay_memory.h"
#include "replay_report.h"
#include "replay_summary.h"
#include "replay_ranks.h"
#include "replay_runner.h"
#include "replay_trace.h"
#include "replay_text.h"
#include "dataplane/config/zone.h"

#define MAX_INPUTS 1024
#define MAX_FAULTS 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw replay --config F --out DIR [--in WHERE=FILE ...] [--in-dir DIR]\n"
		"                     [--collective SPEC] [--hash-policy FILE[:NAME]]\n"
		"                     [--hosts-ignore-pfc] [--seed N] [--until NS] [--sample-ns NS]\n"
		"                     [--deadlock-ns NS] [--te [--te-reinstall-ns NS]] [--trace FILTER]\n"
		"                     [--quiet] [--captures all|none] [--capture-only P ...] [--capture-...]\n"
		"                     [--ranks N [--sync window|null-messages] [--hostfile F]]\n"
		"\n"
		"Replays captures on virtual time through the switch of config F, or through the\n"
		"switches, hosts and links of a zone config F (docs/replay.md). Switches run the live\n"
		"parser, tables and traffic manager; ports serialize at their speed; links add their\n"
		"propagation delay; PFC frames travel between switches and pause hosts. Writes\n"
		"DIR/<port>.pcap (zone: DIR/<switch>/<port>.pcap and DIR/<host>.pcap), nanosecond\n"
		"timestamps = departure times; DIR/events.jsonl; DIR/summary.json; DIR/report.html;\n"
		"and prints a summary. The same inputs, config and seed give byte-identical outputs.\n"
		"\n"
		"  --in WHERE=FILE  a capture: WHERE is a port name of a switch config (frames arrive\n"
		"                   at their timestamps), or in a zone a host (it sends the capture)\n"
		"                   or SWITCH|PORT; repeatable\n"
		"  --in-dir DIR     zone: every host with a capture DIR/<host>.pcap sends it (as\n"
		"                   written by rocesw gen)\n"
		"  --collective SPEC  zone: the hosts run a collective closed loop instead of\n"
		"                   sending captures: each step starts when what it needs arrived,\n"
		"                   over RC QPs with ACKs and go-back-N (docs/replay.md). SPEC is\n"
		"                   PATTERN[,KEY=VALUE...] or a YAML file of the same keys; PATTERN:\n"
		"                   ring, tree, allgather, reducescatter, alltoall, incast; keys:\n"
		"                   ranks (h0:h1:... or a count), size, chunk, mtu, qps,\n"
		"                   split (even|rr), sport (linux|fixed|N), dscp, cts-dscp, root,\n"
		"                   ack-every, ack-timeout (4.096 us x 2^N) or rto (ns), retry,\n"
		"                   nak (on|off), ooo (nak|accept|accept:HOST:...: receivers\n"
		"                   that place out-of-order packets), cts (window in chunks|off),\n"
		"                   drop (HOST@N), dcqcn (on|off), dcqcn-g, -k, -t, -b, -f, -rai,\n"
		"                   -rhai, -min, cnp-interval, cnp-dscp, ce (HOST@N: leaves\n"
		"                   CE-marked),\n"
		"                   ip-base, ip-stride, router-mac\n"
		"  --fail WHAT@T    zone: at virtual time T (ns, or with a us/ms/s suffix) WHAT fails:\n"
		"                   a switch (every link it has), SWITCH|PORT or a host (its link);\n"
		"                   the ports go down through the tables as `rocesw set port` does\n"
		"                   (ECMP groups drop the member, pinned routes fall back);\n"
		"                   frames put on a down link are lost; repeatable\n"
		"  --recover WHAT@T the same comes back up; repeatable\n"
		RSW_REPLAY_TE_USAGE
		"  --hash-policy FILE[:NAME]\n"
		"                   replace every switch's ECMP hash policy with policy NAME of FILE\n"
		"                   (HASH_POLICY or SWITCH_HASH, read as 'default'; NAME may be omitted\n"
		"                   when FILE has one policy)\n"
		"  --hosts-ignore-pfc  hosts send at the captured times even while paused\n"
		"  --seed N         seed of the ECN marking random source (default 1; switch i of a\n"
		"                   zone uses N + i)\n"
		"  --until NS       stop at this virtual time (ns); what is queued then counts as queued\n"
		"  --sample-ns NS   queue-depth sampling period of the event log (default 1000)\n"
		"  --deadlock-ns NS a PFC deadlock (a cycle of paused queues each waiting on the\n"
		"                   next) held this long is reported (default 500000: 500 us)\n"
		"  --trace FILTER   trace through the pipeline every frame the BPF expression FILTER\n"
		"                   (pcap-filter(7), e.g. 'udp port 4791 and ip dst 10.2.0.1')\n"
		"                   matches as it arrives at a switch: each stage's decision and the\n"
		"                   verdict, one JSON line per arrival in DIR/trace.jsonl (at most\n"
		"                   100000; more are counted)\n"
		"  --quiet          no progress line (there is none unless stderr is a terminal)\n"
		"  --ranks N        zone: run partitioned over N MPI ranks on ns-3's distributed\n"
		"                   simulator (mpirun -np N rocesw-replay-mpi, a build option, GPL-2.0\n"
		"                   as a whole): racks stay whole, CTSWs are spread; the outputs are\n"
		"                   the same byte for byte (docs/replay-parallel.md)\n"
		"  --sync MODE      with --ranks: ns-3's granted time 'window' (default) or\n"
		"                   'null-messages'\n"
		"  --hostfile F     with --ranks: Open MPI's hosts file (several machines)\n"
		RSW_TEXT_USAGE RSW_CAPTURE_USAGE
		"environment:\n"
		"  ROCESW_HUGE_HEAP=0  keep the heap on 4 KiB pages (by default replay starts itself\n"
		"                   again with GLIBC_TUNABLES=glibc.malloc.hugetlb=1: docs/replay.md)\n"
		"  ROCESW_REPLAY_STATS=1  say on stderr the CPU time set-up took (for benchmarks),\n"
		"                   whether it reads ahead, the CPU time when the event loop ended and\n"
		"                   its events, the flow cache's size and hits, the most rounds of a\n"
		"                   collective held at once\n"
		"  ROCESW_READ_AHEAD=on|off  ask for the next wake-ups' records ahead, or not (default:\n"
		"                   when the zone's ports' records are more than the core's L2)\n");
}

/* The one policy of --hash-policy FILE[:NAME]. */
static int load_policy(const char *arg, struct rsw_hash_policy *out)
{
	char path[4096], err[1024];
	snprintf(path, sizeof(path), "%s", arg);
	char *colon = strrchr(path, ':');
	const char *name = NULL;
	if (colon && access(path, R_OK) != 0) {
		*colon = 0;
		name = colon + 1;
	}
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_config_hash_policies(path, txn, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw replay: --hash-policy: %s\n", txn ? err : "out of memory");
		rsw_txn_free(txn);
		return -1;
	}
	int found = -1;
	size_t n = rsw_txn_len(txn);
	for (size_t i = 0; i < n; i++)
		if (!name ? n == 1 : !strcmp(rsw_txn_at(txn, i)->u.policy.name, name))
			found = (int)i;
	if (found < 0) {
		fprintf(stderr, "rocesw replay: --hash-policy %s: ", arg);
		if (name)
			fprintf(stderr, "no policy named '%s'; it has:", name);
		else
			fprintf(stderr, "%zu policies, name one with FILE:NAME:", n);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %s", rsw_txn_at(txn, i)->u.policy.name);
		fprintf(stderr, "\n");
		rsw_txn_free(txn);
		return -1;
	}
	*out = rsw_txn_at(txn, (size_t)found)->u.policy.pol;
	rsw_txn_free(txn);
	return 0;
}

static int number(const char *opt, const char *s, unsigned long long *out)
{
	char *end;
	*out = strtoull(s, &end, 0);
	if (!*s || *end || s[0] == '-') {
		fprintf(stderr, "rocesw replay: --%s expects a number, got '%s'\n", opt, s);
		return -1;
	}
	return 0;
}

/* --in and --in-dir into the model's inputs and host captures. */
static int place_inputs(struct rsw_zone *z, int zone, char **in_arg, unsigned n_in,
			const char *in_dir, struct rsw_replay_input *in, unsigned *n_direct)
{
	*n_direct = 0;
	if (in_dir && !zone) {
		fprintf(stderr, "rocesw replay: --in-dir needs a zone config (hosts)\n");
		return -1;
	}
	for (unsigned h = 0; in_dir && h < z->n_host; h++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s.pcap", in_dir, z->host[h].name);
		if (access(path, R_OK) == 0) {
			free((char *)z->host[h].pcap);
			z->host[h].pcap = strdup(path);
		}
	}
	for (unsigned i = 0; i < n_in; i++) {
		char *eq = strrchr(in_arg[i], '=');
		*eq = 0;
		int h = zone ? rsw_zone_host_index(z, in_arg[i]) : -1;
		unsigned s;
		uint16_t p;
		if (h >= 0) {
			free((char *)z->host[h].pcap);
			z->host[h].pcap = strdup(eq + 1);
		} else if (rsw_zone_port(z, in_arg[i], &s, &p) == 0) {
			in[(*n_direct)++] = (struct rsw_replay_input){.sw = (uint16_t)s, .port = p,
								      .path = eq + 1};
		} else {
			fprintf(stderr, "rocesw replay: --in %s: no %s named '%s'\n", in_arg[i],
				zone ? "host or SWITCH|PORT" : "port", in_arg[i]);
			return -1;
		}
	}
	int any = *n_direct > 0;
	for (unsigned h = 0; h < z->n_host; h++)
		any |= z->host[h].pcap != NULL;
	if (!any) {
		fprintf(stderr, "rocesw replay: nothing to replay: give --in%s\n",
			zone ? ", --in-dir or HOST pcap: in the zone config" : "");
		return -1;
	}
	return 0;
}

/* WHAT@T of --fail / --recover: a switch, SWITCH|PORT (the link at that port) or a host (its
 * link), and a time in ns or with a us, ms or s suffix. */
static int parse_fault(const struct rsw_zone *z, const char *opt, const char *arg, int up,
		       struct rsw_replay_fault *f)
{
	char what[512];
	snprintf(what, sizeof(what), "%s", arg);
	char *at = strrchr(what, '@'), *end;
	if (!at) {
		fprintf(stderr, "rocesw replay: --%s expects WHAT@T, got '%s'\n", opt, arg);
		return -1;
	}
	*at = 0;
	double v = strtod(at + 1, &end);
	double mul = !strcmp(end, "") || !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3
		     : !strcmp(end, "ms") ? 1e6 : !strcmp(end, "s") ? 1e9 : -1;
	if (end == at + 1 || mul < 0 || v < 0 || v * mul > 1e18) {
		fprintf(stderr, "rocesw replay: --%s %s: the time must be ns, or end in us, ms or s\n",
			opt, arg);
		return -1;
	}
	f->t = (uint64_t)(v * mul + 0.5);
	f->up = up;
	for (unsigned s = 0; s < z->n_sw; s++)
		if (!strcmp(z->sw[s].name, what)) {
			f->kind = RSW_FAULT_SWITCH;
			f->idx = s;
			return 0;
		}
	struct rsw_topo_end e;
	int h = rsw_zone_host_index(z, what);
	unsigned sw;
	uint16_t port;
	if (h >= 0) {
		e = (struct rsw_topo_end){.sw = RSW_TOPO_HOST, .idx = (uint16_t)h};
	} else if (strchr(what, '|') && rsw_zone_port(z, what, &sw, &port) == 0) {
		e = (struct rsw_topo_end){.sw = (int)sw, .idx = port};
	} else {
		fprintf(stderr, "rocesw replay: --%s %s: no switch, host or SWITCH|PORT named '%s'\n",
			opt, arg, what);
		return -1;
	}
	for (unsigned i = 0; i < z->n_link; i++) {
		const struct rsw_topo_link *l = &z->link[i];
		if ((l->a.sw == e.sw && l->a.idx == e.idx) || (l->b.sw == e.sw && l->b.idx == e.idx)) {
			f->kind = RSW_FAULT_LINK;
			f->idx = i;
			return 0;
		}
	}
	fprintf(stderr, "rocesw replay: --%s %s: '%s' has no link\n", opt, arg, what);
	return -1;
}

/* An input inside the output directory could be overwritten while it is read. */
static int input_safe(const char *out, const char *path)
{
	char ro[4096], rp[4096];
	if (!realpath(out, ro) || !realpath(path, rp))
		return 1; /* a missing file is reported when it is opened */
	size_t n = strlen(ro);
	if (!strncmp(rp, ro, n) && rp[n] == '/') {
		fprintf(stderr, "rocesw replay: %s is inside --out %s, whose files replay overwrites\n",
			path, out);
		return 0;
	}
	return 1;
}

static int write_outputs(const char *out, const struct rsw_zone *z, int zone,
			 const struct rsw_replay_result *res, const struct rsw_coll *coll)
{
	char path[4096];
	json_t *sum = rsw_replay_summary_json(z, zone, res, coll);
	snprintf(path, sizeof(path), "%s/summary.json", out);
	char err[1024];
	int rc = rsw_json_write_whole(sum, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err,
				      sizeof(err));
	if (rc < 0)
		fprintf(stderr, "rocesw replay: %s\n", err);
	snprintf(path, sizeof(path), "%s/report.html", out);
	if (rc == 0 && rsw_replay_report_of(out, sum, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw replay: %s\n", err);
		rc = -1;
	}
	json_decref(sum);
	return rc;
}

enum { OPT_TE = 1200, OPT_TE_REINSTALL, OPT_TRACE };

/* What the command line asked for. */
struct replay_args {
	const char *config, *out, *in_dir, *policy_arg, *coll_arg, *trace;
	char *in_arg[MAX_INPUTS], *fault_arg[MAX_FAULTS];
	int fault_up[MAX_FAULTS];
	unsigned n_in, n_fault;
	unsigned long long seed, until, sample, deadlock;
	int ignore_pfc, quiet;
	int te;                    /* --te */
	long long te_reinstall;    /* --te-reinstall-ns, -1: not given */
	struct rsw_replay_capture cap;
	struct rsw_text_opts text; /* what the summary on stdout shows */
};

/* Takes one option. Returns -1 to go on, or the exit status. */
static int take_option(struct replay_args *a, int c)
{
	switch (c) {
	case 'c': a->config = optarg; break;
	case 'o': a->out = optarg; break;
	case 'D': a->in_dir = optarg; break;
	case 'P': a->policy_arg = optarg; break;
	case 'C': a->coll_arg = optarg; break;
	case 'F':
	case 'R':
		if (a->n_fault == MAX_FAULTS) {
			fprintf(stderr, "rocesw replay: at most %d --fail/--recover\n", MAX_FAULTS);
			return 2;
		}
		a->fault_up[a->n_fault] = c == 'R';
		a->fault_arg[a->n_fault++] = optarg;
		break;
	case 'I': a->ignore_pfc = 1; break;
	case 'q': a->quiet = 1; break;
	case 'i':
		if (a->n_in == MAX_INPUTS || !strchr(optarg, '=')) {
			fprintf(stderr, "rocesw replay: --in expects WHERE=FILE (at most %d)\n",
				MAX_INPUTS);
			return 2;
		}
		a->in_arg[a->n_in++] = optarg;
		break;
	case 's': return number("seed", optarg, &a->seed) < 0 ? 2 : -1;
	case 'S': return number("sample-ns", optarg, &a->sample) < 0 ? 2 : -1;
	case 'u': return number("until", optarg, &a->until) < 0 ? 2 : -1;
	case 'K':
		if (number("deadlock-ns", optarg, &a->deadlock) < 0)
			return 2;
		if (!a->deadlock) {
			fprintf(stderr, "rocesw replay: --deadlock-ns must be at least 1\n");
			return 2;
		}
		return -1;
	case OPT_TE: a->te = 1; return -1;
	case OPT_TRACE: a->trace = optarg; return -1;
	case OPT_TE_REINSTALL: {
		unsigned long long v;
		if (number("te-reinstall-ns", optarg, &v) < 0)
			return 2;
		a->te_reinstall = (long long)v;
		return -1;
	}
	case 'h': usage(stdout); return 0;
	default:
		switch (rsw_capture_opt(c, optarg, &a->cap) ?: rsw_text_opt(c, optarg, &a->text)) {
		case 1: break;
		case 0: usage(stderr); return 2;
		default: return 2;
		}
	}
	return -1;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct replay_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"out", required_argument, NULL, 'o'},
		{"in", required_argument, NULL, 'i'}, {"in-dir", required_argument, NULL, 'D'},
		{"seed", required_argument, NULL, 's'}, {"until", required_argument, NULL, 'u'},
		{"sample-ns", required_argument, NULL, 'S'}, {"quiet", no_argument, NULL, 'q'},
		{"deadlock-ns", required_argument, NULL, 'K'},
		{"te", no_argument, NULL, OPT_TE},
		{"te-reinstall-ns", required_argument, NULL, OPT_TE_REINSTALL},
		{"trace", required_argument, NULL, OPT_TRACE},
		{"hash-policy", required_argument, NULL, 'P'},
		{"collective", required_argument, NULL, 'C'},
		{"fail", required_argument, NULL, 'F'}, {"recover", required_argument, NULL, 'R'},
		{"hosts-ignore-pfc", no_argument, NULL, 'I'}, {"help", no_argument, NULL, 'h'},
		RSW_CAPTURE_OPTIONS, RSW_TEXT_OPTIONS, {NULL, 0, NULL, 0},
	};
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if ((rc = take_option(a, c)) >= 0)
			return rc;
	if (!a->config || !a->out || optind < argc) {
		fprintf(stderr, "rocesw replay: give --config and --out\n");
		usage(stderr);
		return 2;
	}
	if ((a->te && !a->coll_arg) || (a->te_reinstall >= 0 && !a->te)) {
		fprintf(stderr, "rocesw replay: --te needs --collective (its traffic matrix), and "
			"--te-reinstall-ns needs --te\n");
		return 2;
	}
	if (a->coll_arg && !a->cap.snaplen_given)
		a->cap.snaplen = RSW_REPLAY_GENERATED_SNAPLEN;
	return -1;
}

/* Whether the config is a zone, the options that need one, then DPDK sized for the config and
 * the switches compiled into z. Returns 0, or the exit status after saying what failed. */
static int load_zone(const struct replay_args *a, int *zone, struct rsw_zone *z)
{
	char err[2048];
	*zone = rsw_zone_detect(a->config, err, sizeof(err));
	if (*zone < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (a->n_fault && !*zone) {
		fprintf(stderr, "rocesw replay: --fail and --recover need a zone config (links)\n");
		return 2;
	}
	if (a->coll_arg && (!*zone || a->n_in || a->in_dir)) {
		fprintf(stderr, "rocesw replay: --collective needs a zone config (hosts) and no "
			"--in or --in-dir\n");
		return 2;
	}
	struct rsw_hash_policy pol;
	if (a->policy_arg && load_policy(a->policy_arg, &pol) < 0)
		return 2;
	unsigned long dpdk_mb;
	FILE *note = a->quiet || rsw_replay_rank ? NULL : stderr; /* once, from rank 0 */
	if (rsw_replay_dpdk_mb(a->config, *zone, note, &dpdk_mb, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw replay: %s\n", err);
		return 1;
	}
	if (rsw_eal_init_sized("rocesw", dpdk_mb) < 0)
		return 1;
	/* route tables sized to their routes: a zone compiles hundreds of switches */
	rsw_fib_compact_ipv4(1);
	struct rsw_zone_opts zo = {.ecn_seed = a->seed, .policy = a->policy_arg ? &pol : NULL,
				   .warnings = stderr};
	if ((*zone ? rsw_zone_load(a->config, &zo, z, err, sizeof(err))
		   : rsw_zone_single(a->config, &zo, z, err, sizeof(err))) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	return 0;
}

/* The traffic: a collective, which replaces the hosts' captures, or the captures given. Returns
 * 0, or 2 after saying what is wrong. */
static int place_traffic(struct replay_args *a, int zone, struct rsw_zone *z,
			 struct rsw_coll *coll, struct rsw_replay_input *in, unsigned *n_direct)
{
	char err[2048];
	*n_direct = 0;
	if (!a->coll_arg)
		return place_inputs(z, zone, a->in_arg, a->n_in, a->in_dir, in, n_direct) < 0
			       ? 2 : 0;
	if (rsw_coll_spec_parse(a->coll_arg, z, coll, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw replay: %s\n", err);
		return 2;
	}
	for (unsigned h = 0; h < z->n_host; h++) {
		free((char *)z->host[h].pcap);
		z->host[h].pcap = NULL;
	}
	return 0;
}

/* --fail and --recover, in time order; at equal times in the order given. Returns 0, or 2. */
static int load_faults(const struct replay_args *a, const struct rsw_zone *z,
		       struct rsw_replay_fault *faults)
{
	for (unsigned i = 0; i < a->n_fault; i++)
		if (parse_fault(z, a->fault_up[i] ? "recover" : "fail", a->fault_arg[i],
				a->fault_up[i], &faults[i]) < 0)
			return 2;
	/* an insertion sort is stable */
	for (unsigned i = 1; i < a->n_fault; i++)
		for (unsigned j = i; j > 0 && faults[j - 1].t > faults[j].t; j--) {
			struct rsw_replay_fault tmp = faults[j];
			faults[j] = faults[j - 1];
			faults[j - 1] = tmp;
		}
	return 0;
}

/* Makes the output directory; 0, or 2 when an input is inside it. */
static int check_out_dir(const char *out, const struct rsw_replay_input *in, unsigned n_direct,
			 const struct rsw_zone *z)
{
	int safe = 1;
	mkdir(out, 0755);
	for (unsigned i = 0; i < n_direct; i++)
		safe &= input_safe(out, in[i].path);
	for (unsigned h = 0; h < z->n_host; h++)
		if (z->host[h].pcap)
			safe &= input_safe(out, z->host[h].pcap);
	return safe ? 0 : 2;
}

rsw_replay_runner_fn *rsw_replay_runner;
unsigned rsw_replay_rank;

/* The run, its event log, then the summary, report and captures. Returns the exit status. */
static int run(struct replay_args *a, const struct rsw_zone *z, const struct rsw_replay_model *m)
{
	char evpath[4096], err[2048];
	snprintf(evpath, sizeof(evpath), "%s/events.jsonl", a->out);
	/* ranks other than 0 hand their lines to rank 0, which writes the log */
	FILE *ev = rsw_replay_rank ? tmpfile() : fopen(evpath, "w");
	if (!ev) {
		fprintf(stderr, "rocesw replay: cannot write %s\n", evpath);
		return 1;
	}
	/* a progress line rewritten with \r is for a person watching; in a log it reads like loss */
	FILE *progress = !a->quiet && isatty(STDERR_FILENO) ? stderr : NULL;
	struct rsw_replay_trace hooks;
	struct rsw_replay_tracer *tracer = NULL;
	if (a->trace && !(tracer = rsw_replay_tracer_open(a->trace, a->out, &hooks, err,
							  sizeof(err)))) {
		fprintf(stderr, "rocesw replay: %s\n", err);
		fclose(ev);
		unlink(evpath);
		return 2;
	}
	struct rsw_replay_opts ro = {.until_ns = a->until, .progress = progress, .events = ev,
				     .sample_ns = a->sample, .capture = &a->cap,
				     .deadlock_ns = a->deadlock, .trace = tracer ? &hooks : NULL};
	/* for benchmarks: what set-up cost, measured in the run itself (docs/performance.md) */
	const char *stats = getenv("ROCESW_REPLAY_STATS");
	if (stats && !strcmp(stats, "1"))
		ro.setup_cpu = stderr;
	struct rsw_replay_result res;
	int rc = rsw_replay_runner ? rsw_replay_runner(m, a->out, &ro, &res, err, sizeof(err))
				   : rsw_replay_run(m, a->out, &ro, &res, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "rocesw replay: %s\n", err);
	if (rsw_replay_rank) { /* its captures are written; rank 0 writes the rest */
		if (rc == 0)
			rsw_replay_result_free(&res, z->n_sw);
		fclose(ev);
		return rc < 0;
	}
	if ((ferror(ev) | fclose(ev)) != 0 && rc == 0) {
		fprintf(stderr, "rocesw replay: cannot write %s: %s\n", evpath, strerror(errno));
		rsw_replay_result_free(&res, z->n_sw);
		rc = -1;
	}
	if (rc < 0) {
		unlink(evpath); /* the log of a run that did not finish, or cut short */
		rsw_replay_tracer_close(tracer, NULL, err, sizeof(err)); /* and its trace */
		return 1;
	}
	rc = write_outputs(a->out, z, m->zone, &res, m->coll) < 0;
	rsw_replay_text_print(stdout, z, m->zone, &res, m->coll, &a->text);
	rsw_capture_print(stdout, &a->cap, a->out);
	if (rsw_replay_tracer_close(tracer, stdout, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw replay: %s\n", err);
		rc = 1;
	}
	rsw_replay_result_free(&res, z->n_sw);
	rsw_fib_process_exiting();
	return rc;
}

int rsw_cmd_replay(int argc, char **argv)
{
	/* large, and the capture options keep pointers into the arguments */
	static struct replay_args a;
	static struct rsw_zone z;
	static struct rsw_replay_input in[MAX_INPUTS];
	static struct rsw_coll coll;
	static struct rsw_replay_fault faults[MAX_FAULTS];
	unsigned n_direct = 0;
	int zone, rc;

	static struct rsw_replay_te te;
	if ((rc = rsw_replay_ranks(argc, argv, rsw_replay_runner != NULL)) >= 0)
		return rc;
	a = (struct replay_args){.seed = 1, .sample = 1000, .te_reinstall = -1};
	if ((rc = parse_args(argc, argv, &a)) >= 0 || (rc = load_zone(&a, &zone, &z)) != 0)
		return rc;
	rc = place_traffic(&a, zone, &z, &coll, in, &n_direct);
	if (!rc)
		rc = load_faults(&a, &z, faults);
	if (!rc && a.te) {
		char err[2048];
		if (rsw_replay_te_prepare(&z, &coll, faults, a.n_fault, a.te_reinstall, &te, err,
					  sizeof(err)) < 0) {
			fprintf(stderr, "rocesw replay: --te: %s\n", err);
			rc = 1;
		} else if (!a.quiet) {
			fprintf(stderr, "rocesw replay: --te: %u policy routes installed (%u flows over "
				"capacity), %u re-installs scheduled\n", te.n_routes, te.n_over,
				te.n_install);
		}
	}
	if (!rc)
		rc = check_out_dir(a.out, in, n_direct, &z);
	if (!rc) {
		struct rsw_replay_model model = {
			.sw = z.sw, .n_sw = z.n_sw, .host = z.host, .n_host = z.n_host,
			.link = z.link, .n_link = z.n_link, .in = in, .n_in = n_direct,
			.zone = zone, .hosts_ignore_pfc = a.ignore_pfc,
			.coll = a.coll_arg ? &coll : NULL, .fault = faults, .n_fault = a.n_fault,
			.install = te.install, .n_install = te.n_install};
		rc = run(&a, &z, &model);
	}
	rsw_replay_te_free(&te);
	rsw_zone_free(&z);
	return rc;
}
