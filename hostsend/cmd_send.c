/* `rocesw send IFACE PCAP...`: a lab host that behaves like replay's hosts. It sends captures
 * onto an interface at their timestamps (or at a fixed rate, or as fast as it can) through an
 * AF_XDP socket, and holds the frames of a priority that the link partner paused with PFC or
 * 802.3x PAUSE: an XDP program on the same interface (pfc_xdp.bpf.c) records the pauses in a
 * BPF map this loop reads through mmap. Frames of other priorities keep going. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <linux/if_link.h>

#include "control/cli/cmd.h"
#include "hostsend/pfc_xdp_load.h"
#include "hostsend/recv.h"
#include "hostsend/xsk_tx.h"

/* Frames handed to the kernel and not yet on the wire cannot be called back when an XOFF
 * arrives: keep them few (the switch's headroom has to absorb them). */
#define MAX_IN_FLIGHT 32
/* Frames a late wake-up may send back to back to catch up with the link's average rate. */
#define MAX_BURST 8

struct frame {
	uint64_t t_ns;    /* capture time, relative to the earliest frame */
	uint32_t len;
	uint8_t prio;
	uint8_t *data;
};

struct prio_stats {
	uint64_t sent, bytes, held;  /* held: frames that became due while their priority was paused */
	uint64_t paused_ns;          /* time this priority had frames waiting while paused */
};

struct opts {
	const char *ifname, *tx_mode, *xdp_mode;
	double rate;            /* frames/s; 0: capture timestamps */
	int fast, ignore_pfc, json;
	unsigned link_mbps;
	uint8_t dscp_prio[64];
	int receive;            /* --receive: count what arrives instead of sending */
	struct rsw_recv_opts recv;
};

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw send IFACE PCAP... [--rate FPS | --fast] [--ignore-pfc]\n"
		"                   [--dscp-map DSCP:PRIO,...] [--default-priority P]\n"
		"                   [--link-speed MBPS] [--tx auto|xdp|packet]\n"
		"                   [--xdp-mode auto|native|skb] [--json] | --version\n"
		"       rocesw send IFACE --receive [--count N] [--start-psn PSN] [--json]\n"
		"\n"
		"Sends the frames of the captures (merged by time; `rocesw gen` output works) onto\n"
		"IFACE at their relative timestamps, through an AF_XDP socket, and honours the PFC and\n"
		"802.3x PAUSE frames received on IFACE: an XDP program records them (and drops them),\n"
		"and frames of a paused priority wait until XON or the pause time runs out, while\n"
		"other priorities go on. Run it as root inside the lab host (e.g. ip netns exec).\n"
		"\n"
		"  --rate FPS           send at FPS frames per second instead of the timestamps\n"
		"  --fast               send back to back at the link speed\n"
		"  --ignore-pfc         send regardless of pauses (a plain Linux host); still counts\n"
		"  --dscp-map LIST      priority of untagged IP frames by DSCP, e.g. 26:3,48:6; added\n"
		"                       to the default, which is config/rtsw.yaml's AZURE map\n"
		"                       (3:3,4:4,5:2,8:0,46:5,48:6) plus 26:3 (the RoCEv2 DSCP NICs use)\n"
		"  --default-priority P priority of other IP frames (default 1, as AZURE's TC 1)\n"
		"                       802.1Q-tagged frames use their PCP; non-IP frames priority 0\n"
		"  --link-speed MBPS    the wire the host has: frames never leave faster (frame +\n"
		"                       24 bytes of FCS, preamble, gap), and pause quanta are 512\n"
		"                       bit times at it; default /sys/class/net/IFACE/speed, else\n"
		"                       10000\n"
		"  --tx MODE            auto: AF_XDP, else a raw AF_PACKET socket (said on stderr);\n"
		"                       xdp: AF_XDP or fail; packet: AF_PACKET\n"
		"  --xdp-mode MODE      how the PFC program attaches: auto (native, else skb)\n"
		"  --json               counters as JSON on stdout\n"
		"\n"
		"--receive: the receiving host. Counts the RoCEv2 RC data frames arriving on IFACE\n"
		"(UDP/4791, a capture), per QP (source address and destination QP), as a receiver\n"
		"that places out of order would see them: packets past the expected PSN\n"
		"(ooo_packets), the largest distance, the reorder buffer a strict receiver would\n"
		"need (packets and payload bytes), duplicates; it sends nothing. Stops after\n"
		"--count N data packets, or at SIGINT/SIGTERM, then reports (docs/lab.md).\n"
		"  --start-psn PSN      every QP's first PSN (default 0, as rocesw gen and replay)\n"
		"\n"
		"Exit status: 0 all frames sent (--receive: the count reached, or stopped by a\n"
		"signal), 1 error or interrupted, 2 bad usage.\n");
}

static int parse_dscp_map(const char *s, uint8_t *map)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned d, p;
		char extra;
		if (sscanf(tok, "%u:%u%c", &d, &p, &extra) != 2 || d > 63 || p > 7) {
			fprintf(stderr, "rocesw send: --dscp-map: '%s' is not DSCP:PRIORITY with DSCP "
				"0-63 and PRIORITY 0-7\n", tok);
			rc = -1;
			break;
		}
		map[d] = (uint8_t)p;
	}
	free(copy);
	return rc;
}

static uint8_t frame_prio(const uint8_t *p, uint32_t len, const uint8_t *dscp_prio)
{
	if (len < 14)
		return 0;
	uint16_t et = (uint16_t)(p[12] << 8 | p[13]);
	if ((et == 0x8100 || et == 0x88a8) && len >= 18)
		return p[14] >> 5; /* PCP */
	if (et == 0x0800 && len >= 16)
		return dscp_prio[p[15] >> 2];
	if (et == 0x86dd && len >= 16)
		return dscp_prio[((p[14] & 0x0f) << 2) | (p[15] >> 6)];
	return 0;
}

static int cmp_frame(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return x->data < y->data ? -1 : x->data > y->data; /* stable: file order, then capture order */
}

/* Reads every capture; frames keep their file order for equal times. */
static struct frame *load(char **paths, int n_paths, const struct opts *o, size_t *n_out)
{
	size_t n = 0, cap = 0;
	struct frame *f = NULL;
	uint64_t t0 = UINT64_MAX;
	for (int i = 0; i < n_paths; i++) {
		char errbuf[PCAP_ERRBUF_SIZE];
		pcap_t *pc = pcap_open_offline_with_tstamp_precision(paths[i],
								      PCAP_TSTAMP_PRECISION_NANO, errbuf);
		if (!pc) {
			fprintf(stderr, "rocesw send: %s: %s\n", paths[i], errbuf);
			goto fail;
		}
		if (pcap_datalink(pc) != DLT_EN10MB) {
			fprintf(stderr, "rocesw send: %s: not an Ethernet capture (link type %d)\n",
				paths[i], pcap_datalink(pc));
			pcap_close(pc);
			goto fail;
		}
		struct pcap_pkthdr *h;
		const u_char *data;
		int rc;
		while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
			if (h->caplen < h->len) {
				fprintf(stderr, "rocesw send: %s: frame %zu is truncated in the capture "
					"(%u of %u bytes)\n", paths[i], n + 1, h->caplen, h->len);
				pcap_close(pc);
				goto fail;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				struct frame *g = realloc(f, cap * sizeof(*f));
				if (!g)
					goto oom;
				f = g;
			}
			uint64_t t = (uint64_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec;
			f[n].t_ns = t;
			f[n].len = h->caplen;
			f[n].data = malloc(h->caplen ? h->caplen : 1);
			if (!f[n].data)
				goto oom;
			memcpy(f[n].data, data, h->caplen);
			f[n].prio = frame_prio(data, h->caplen, o->dscp_prio);
			if (t < t0)
				t0 = t;
			n++;
		}
		if (rc == -1) {
			fprintf(stderr, "rocesw send: %s: %s\n", paths[i], pcap_geterr(pc));
			pcap_close(pc);
			goto fail;
		}
		pcap_close(pc);
	}
	if (n == 0) {
		fprintf(stderr, "rocesw send: the captures hold no frames\n");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		f[i].t_ns -= t0;
	qsort(f, n, sizeof(*f), cmp_frame);
	*n_out = n;
	return f;
oom:
	fprintf(stderr, "rocesw send: out of memory reading the captures\n");
fail:
	for (size_t i = 0; i < n; i++)
		free(f[i].data);
	free(f);
	return NULL;
}

static unsigned sysfs_speed(const char *ifname)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	FILE *fp = fopen(path, "r");
	int v = -1;
	if (fp) {
		if (fscanf(fp, "%d", &v) != 1)
			v = -1;
		fclose(fp);
	}
	return v > 0 ? (unsigned)v : 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL),
			      .tv_nsec = (long)(t % 1000000000ULL)};
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

struct run {
	struct frame *f;
	size_t n, next, sent;
	uint32_t *q[RSW_PFC_PRIOS];      /* per priority FIFO of frame indexes */
	size_t qh[RSW_PFC_PRIOS], qt[RSW_PFC_PRIOS];
	struct prio_stats ps[RSW_PFC_PRIOS];
	uint64_t start, end;
	uint64_t wire_free;              /* when the emulated wire takes the next frame */
};

/* Time a frame holds the wire at the link speed: frame + FCS, preamble and inter-frame gap. */
static uint64_t wire_ns(uint32_t len, unsigned mbps)
{
	return ((uint64_t)len + 24) * 8 * 1000 / mbps;
}

static uint64_t due(const struct run *r, const struct opts *o, size_t i)
{
	if (o->fast)
		return r->start;
	if (o->rate > 0)
		return r->start + (uint64_t)((double)i * 1e9 / o->rate);
	return r->start + r->f[i].t_ns;
}

static int paused(const struct opts *o, const struct rsw_pfc_xdp *x, unsigned p, uint64_t now)
{
	return !o->ignore_pfc && x->state && x->state->pause_until[p] > now;
}

/* Frames now due join their priority's queue (held: it is paused). */
static void enqueue_due(struct run *r, const struct opts *o, struct rsw_pfc_xdp *x, uint64_t now)
{
	while (r->next < r->n && due(r, o, r->next) <= now) {
		unsigned p = r->f[r->next].prio;
		r->ps[p].held += paused(o, x, p, now);
		r->q[p][r->qt[p]++] = (uint32_t)r->next++;
	}
}

/* The earliest due frame's priority among those not paused, or -1. */
static int next_prio(const struct run *r, const struct opts *o, struct rsw_pfc_xdp *x,
		     uint64_t now)
{
	int best = -1;
	for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
		if (r->qh[p] != r->qt[p] && !paused(o, x, p, now) &&
		    (best < 0 || r->q[p][r->qh[p]] < r->q[best][r->qh[best]]))
			best = (int)p;
	return best;
}

/* Up to 64 frames sent at the link's pace, the pause state re-read (*now) after each. Returns
 * -1 (a send failed, said), else whether anything went; *full: the kernel's ring is. */
static int send_round(struct run *r, const struct opts *o, struct rsw_pfc_xdp *x,
		      struct rsw_tx *tx, uint64_t *now, int *full)
{
	char err[256];
	int progress = 0;
	*full = 0;
	for (unsigned k = 0; k < 64 && !*full && *now >= r->wire_free; k++) {
		int best = next_prio(r, o, x, *now);
		if (best < 0)
			break;
		const struct frame *f = &r->f[r->q[best][r->qh[best]]];
		if (rsw_tx_in_flight(tx) >= MAX_IN_FLIGHT) {
			*full = 1;
			break;
		}
		int rc = rsw_tx_send(tx, f->data, f->len, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "rocesw send: %s: %s\n", o->ifname, err);
			return -1;
		}
		if (rc == 0) {
			*full = 1;
			break;
		}
		/* never faster than the link: a NIC cannot be, and a switch's headroom is
		 * sized for what the link carries during the peer's reaction time */
		uint64_t w = wire_ns(f->len, o->link_mbps);
		/* a late wake-up (a VM's timers are coarse: a 50 µs sleep can take 500) may
		 * catch up with a burst of at most MAX_BURST frames, so the average stays
		 * at the link speed and the burst within what the headroom absorbs */
		uint64_t floor = *now > MAX_BURST * w ? *now - MAX_BURST * w : 0;
		r->wire_free = (r->wire_free > floor ? r->wire_free : floor) + w;
		r->qh[best]++;
		r->ps[best].sent++;
		r->ps[best].bytes += f->len;
		r->sent++;
		progress = 1;
		/* re-read the pause state every frame: an XOFF can arrive at any time */
		*now = mono_ns();
	}
	return progress;
}

/* When there is something to do: the next frame's time, the link free for a queue not paused,
 * a pause's end, or a poll for an XON (20 µs). UINT64_MAX: nothing left to wait for. */
static uint64_t next_wake(const struct run *r, const struct opts *o, struct rsw_pfc_xdp *x,
			  uint64_t now)
{
	uint64_t wake = r->next < r->n ? due(r, o, r->next) : UINT64_MAX;
	for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
		if (r->qh[p] != r->qt[p] && !paused(o, x, p, now)) {
			if (r->wire_free < wake)
				wake = r->wire_free;
		} else if (r->qh[p] != r->qt[p]) {
			uint64_t until = x->state->pause_until[p];
			uint64_t poll = now + 20000; /* an XON ends a pause early */
			if (until < wake)
				wake = until;
			if (poll < wake)
				wake = poll;
		}
	return wake;
}

/* Each round: time paused accounted, due frames queued, a round sent, then a wait for the next
 * thing to do. */
static int send_loop(struct run *r, const struct opts *o, struct rsw_pfc_xdp *x,
		     struct rsw_tx *tx)
{
	uint64_t last = mono_ns();
	while (r->sent < r->n && !g_stop) {
		uint64_t now = mono_ns();
		for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
			if (r->qh[p] != r->qt[p] && paused(o, x, p, now))
				r->ps[p].paused_ns += now - last;
		last = now;
		enqueue_due(r, o, x, now);
		int full, progress = send_round(r, o, x, tx, &now, &full);
		if (progress < 0)
			return -1;
		rsw_tx_kick(tx);
		if (progress && now >= r->wire_free)
			continue;
		if (full) {
			sched_yield(); /* the kernel (and on a small machine the switch) needs the CPU */
			continue;
		}
		/* nothing to send now: wait for the next frame's time, or poll for XON / expiry */
		uint64_t wake = next_wake(r, o, x, now);
		if (wake == UINT64_MAX)
			continue; /* nothing left to wait for: the last frame went */
		if (wake > now + 20000)
			sleep_until(wake - 10000);
		else
			sched_yield();
	}
	/* frames handed to the kernel are sent once it completes them */
	uint64_t give_up = mono_ns() + 1000000000ULL;
	while (rsw_tx_in_flight(tx) && mono_ns() < give_up)
		rsw_tx_kick(tx);
	r->end = mono_ns();
	return g_stop ? -1 : 0;
}

static void report(const struct run *r, const struct opts *o, const struct rsw_pfc_xdp *x,
		   const struct rsw_tx *tx)
{
	volatile const struct rsw_pfc_xdp_state *s = x->state;
	double secs = (double)(r->end - r->start) / 1e9;
	const char *path = tx->use_xdp ? "af_xdp" : "af_packet";
	const char *xmode = !x->ifindex ? "none"
			    : (x->xdp_flags & XDP_FLAGS_SKB_MODE) ? "skb" : "native";
	if (o->json) {
		json_t *j = json_object(), *prios = json_array();
		json_object_set_new(j, "interface", json_string(o->ifname));
		json_object_set_new(j, "tx", json_string(path));
		json_object_set_new(j, "xdp_mode", json_string(xmode));
		json_object_set_new(j, "honour_pfc", json_boolean(!o->ignore_pfc));
		json_object_set_new(j, "link_mbps", json_integer(o->link_mbps));
		json_object_set_new(j, "frames", json_integer((json_int_t)r->n));
		json_object_set_new(j, "sent", json_integer((json_int_t)r->sent));
		json_object_set_new(j, "bytes", json_integer((json_int_t)tx->tx_bytes));
		json_object_set_new(j, "via_af_packet", json_integer((json_int_t)tx->via_packet));
		json_object_set_new(j, "seconds", json_real(secs));
		for (unsigned p = 0; p < RSW_PFC_PRIOS; p++) {
			json_t *e = json_object();
			json_object_set_new(e, "priority", json_integer(p));
			json_object_set_new(e, "sent", json_integer((json_int_t)r->ps[p].sent));
			json_object_set_new(e, "bytes", json_integer((json_int_t)r->ps[p].bytes));
			json_object_set_new(e, "held", json_integer((json_int_t)r->ps[p].held));
			json_object_set_new(e, "paused_us",
					    json_integer((json_int_t)(r->ps[p].paused_ns / 1000)));
			json_object_set_new(e, "pfc_rx", json_integer(s ? (json_int_t)s->pfc_frames[p] : 0));
			json_object_set_new(e, "xoff_rx", json_integer(s ? (json_int_t)s->xoff[p] : 0));
			json_object_set_new(e, "xon_rx", json_integer(s ? (json_int_t)s->xon[p] : 0));
			json_object_set_new(e, "pause_requested_us",
					    json_integer(s ? (json_int_t)(s->pause_ns[p] / 1000) : 0));
			json_array_append_new(prios, e);
		}
		json_object_set_new(j, "priorities", prios);
		json_object_set_new(j, "pause_rx", json_integer(s ? (json_int_t)s->pause_frames : 0));
		json_object_set_new(j, "mac_control_dropped",
				    json_integer(s ? (json_int_t)s->mac_control_dropped : 0));
		json_object_set_new(j, "mac_control_bad",
				    json_integer(s ? (json_int_t)s->mac_control_bad : 0));
		json_dumpf(j, stdout, JSON_INDENT(1));
		printf("\n");
		json_decref(j);
		return;
	}
	printf("%s: %zu of %zu frames, %" PRIu64 " bytes in %.3f s via %s (PFC program: %s mode; "
	       "%s)\n", o->ifname, r->sent, r->n, tx->tx_bytes, secs, path, xmode,
	       o->ignore_pfc ? "pauses ignored" : "pauses honoured");
	printf("prio       sent       held  paused_us     pfc_rx    xoff_rx     xon_rx  "
	       "pause_requested_us\n");
	for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
		printf("%4u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %10" PRIu64 " %19" PRIu64 "\n", p, r->ps[p].sent, r->ps[p].held,
		       r->ps[p].paused_ns / 1000, s ? (uint64_t)s->pfc_frames[p] : 0,
		       s ? (uint64_t)s->xoff[p] : 0, s ? (uint64_t)s->xon[p] : 0,
		       s ? (uint64_t)s->pause_ns[p] / 1000 : 0);
	if (s)
		printf("802.3x PAUSE received %" PRIu64 ", MAC control dropped %" PRIu64
		       " (malformed %" PRIu64 ")\n", (uint64_t)s->pause_frames,
		       (uint64_t)s->mac_control_dropped, (uint64_t)s->mac_control_bad);
}

static const struct option send_options[] = {
	{"rate", required_argument, 0, 'r'}, {"fast", no_argument, 0, 'f'},
	{"ignore-pfc", no_argument, 0, 'i'}, {"dscp-map", required_argument, 0, 'd'},
	{"default-priority", required_argument, 0, 'p'},
	{"link-speed", required_argument, 0, 's'}, {"tx", required_argument, 0, 't'},
	{"xdp-mode", required_argument, 0, 'x'}, {"json", no_argument, 0, 'j'},
	{"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'},
	{"receive", no_argument, 0, 'R'}, {"count", required_argument, 0, 'c'},
	{"start-psn", required_argument, 0, 'P'}, {0, 0, 0, 0}};

/* Takes one option; --dscp-map and --default-priority wait in *user_map and *def_prio.
 * Returns -1 to go on, or the exit status. */
static int take_option(struct opts *o, int c, const char **user_map, int *def_prio)
{
	char *end;
	switch (c) {
	case 'r':
		o->rate = strtod(optarg, &end);
		if (*end || !(o->rate > 0)) {
			fprintf(stderr, "rocesw send: --rate wants frames per second > 0, not "
				"'%s'\n", optarg);
			return 2;
		}
		break;
	case 'f': o->fast = 1; break;
	case 'i': o->ignore_pfc = 1; break;
	case 'd': *user_map = optarg; break;
	case 'p':
		*def_prio = (int)strtol(optarg, &end, 10);
		if (*end || *def_prio < 0 || *def_prio > 7) {
			fprintf(stderr, "rocesw send: --default-priority wants 0-7\n");
			return 2;
		}
		break;
	case 's': {
		long v = strtol(optarg, &end, 10);
		if (*end || v <= 0 || v > 10000000) {
			fprintf(stderr, "rocesw send: --link-speed wants Mb/s, 1-10000000\n");
			return 2;
		}
		o->link_mbps = (unsigned)v;
		break;
	}
	case 't':
	case 'x': {
		int ok = !strcmp(optarg, "auto") ||
			 (c == 't' ? !strcmp(optarg, "xdp") || !strcmp(optarg, "packet")
				   : !strcmp(optarg, "native") || !strcmp(optarg, "skb"));
		if (!ok) {
			fprintf(stderr, "rocesw send: --%s: unknown mode '%s'\n",
				c == 't' ? "tx" : "xdp-mode", optarg);
			return 2;
		}
		*(c == 't' ? &o->tx_mode : &o->xdp_mode) = optarg;
		break;
	}
	case 'j': o->json = o->recv.json = 1; break;
	case 'R': o->receive = 1; break;
	case 'c':
	case 'P': {
		unsigned long long v = strtoull(optarg, &end, 0);
		if (!*optarg || *end || optarg[0] == '-' || (c == 'P' && v > 0xFFFFFF) ||
		    (c == 'c' && !v)) {
			fprintf(stderr, "rocesw send: --%s wants %s, not '%s'\n",
				c == 'c' ? "count" : "start-psn",
				c == 'c' ? "a number of packets > 0" : "a PSN 0-16777215", optarg);
			return 2;
		}
		if (c == 'c')
			o->recv.count = v;
		else
			o->recv.start_psn = (uint32_t)v;
		break;
	}
	case 'h': usage(stdout); return 0;
	case 'V':
		printf("rocesw send %s (libbpf %s)\n", RSW_VERSION, rsw_pfc_xdp_libbpf_version());
		return 0;
	default: usage(stderr); return 2;
	}
	return -1;
}

/* The options into o, the interface's name included, and the DSCP map built: SONiC's
 * defaults, then --dscp-map. Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	const char *user_map = NULL;
	int c, rc, def_prio = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", send_options, NULL)) != -1)
		if ((rc = take_option(o, c, &user_map, &def_prio)) >= 0)
			return rc;
	if (o->fast && o->rate > 0) {
		fprintf(stderr, "rocesw send: --fast and --rate exclude each other\n");
		return 2;
	}
	if (o->receive) {
		if (argc - optind != 1) {
			fprintf(stderr, "rocesw send: --receive takes the interface and no capture\n");
			return 2;
		}
		o->ifname = argv[optind];
		return -1;
	}
	if (o->recv.count || o->recv.start_psn) {
		fprintf(stderr, "rocesw send: --count and --start-psn go with --receive\n");
		return 2;
	}
	if (argc - optind < 2) {
		usage(stderr);
		return 2;
	}
	memset(o->dscp_prio, def_prio, sizeof(o->dscp_prio));
	parse_dscp_map("3:3,4:4,5:2,8:0,46:5,48:6,26:3", o->dscp_prio);
	if (user_map && parse_dscp_map(user_map, o->dscp_prio) < 0)
		return 2;
	o->ifname = argv[optind];
	return -1;
}

/* Loads the captures, opens the PFC program and the TX socket, sends, reports, and closes
 * what it opened in the one cleanup. Returns the exit status. */
static int send_captures(const struct opts *o, int ifindex, char **pcaps, int n_pcaps)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.f = load(pcaps, n_pcaps, o, &r.n);
	if (!r.f)
		return 1;
	int rc = 1;
	char err[512];
	struct rsw_pfc_xdp x;
	struct rsw_tx tx;
	memset(&tx, 0, sizeof(tx));
	tx.pkt_fd = -1;
	if (rsw_pfc_xdp_open(&x, o->link_mbps, err, sizeof(err)) < 0 ||
	    rsw_pfc_xdp_attach(&x, ifindex, o->xdp_mode, err, sizeof(err)) < 0) {
		if (!o->ignore_pfc) {
			fprintf(stderr, "rocesw send: %s: %s; without it pauses cannot be honoured "
				"(--ignore-pfc sends anyway)\n", o->ifname, err);
			goto out;
		}
		fprintf(stderr, "rocesw send: %s: %s; PFC frames are not counted\n", o->ifname, err);
	}
	if (rsw_tx_open(&tx, o->ifname, ifindex, o->tx_mode, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw send: %s: %s\n", o->ifname, err);
		goto out;
	}
	for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
		if (!(r.q[p] = malloc((r.n ? r.n : 1) * sizeof(uint32_t)))) {
			fprintf(stderr, "rocesw send: out of memory\n");
			goto out;
		}
	prctl(PR_SET_TIMERSLACK, 1UL); /* pacing sleeps of tens of microseconds */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	r.start = mono_ns() + 1000000; /* 1 ms: the first frame's time is not already late */
	rc = send_loop(&r, o, &x, &tx) < 0 ? 1 : 0;
	report(&r, o, &x, &tx);
out:
	rsw_tx_close(&tx);
	rsw_pfc_xdp_close(&x);
	for (unsigned p = 0; p < RSW_PFC_PRIOS; p++)
		free(r.q[p]);
	for (size_t i = 0; i < r.n; i++)
		free(r.f[i].data);
	free(r.f);
	return rc;
}

int rsw_cmd_send(int argc, char **argv)
{
	struct opts o = {.tx_mode = "auto", .xdp_mode = "auto"};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	int ifindex = (int)if_nametoindex(o.ifname);
	if (!ifindex) {
		fprintf(stderr, "rocesw send: no interface '%s' here: %s\n", o.ifname,
			strerror(errno));
		return 1;
	}
	if (o.receive)
		return rsw_send_receive(o.ifname, &o.recv);
	if (!o.link_mbps && !(o.link_mbps = sysfs_speed(o.ifname))) {
		o.link_mbps = 10000;
		fprintf(stderr, "rocesw send: %s reports no speed; pause quanta are counted at "
			"10000 Mb/s (--link-speed)\n", o.ifname);
	}
	return send_captures(&o, ifindex, argv + optind + 1, argc - optind - 1);
}
