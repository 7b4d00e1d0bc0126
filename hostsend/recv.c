/* `rocesw send IFACE --receive`: the lab host's receiving side. It watches the RoCEv2 frames
 * arriving on IFACE (a libpcap capture, UDP/4791) and counts, per QP (source address and
 * destination QP), what an RC receiver that places out of order would see: packets past the
 * expected PSN, the largest distance, and the reorder buffer a strict receiver would need
 * (dataplane/transport/rc_reorder.h, the same counting as replay's ooo=accept responders). It
 * sends nothing: on a lab veth no NIC answers, so no NAK or ACK goes back. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_hdr.h"
#include "dataplane/transport/rc_reorder.h"
#include "hostsend/recv.h"

#define MAX_QPS 4096 /* QPs watched; packets of more are counted as untracked */

struct qp_watch {
	uint8_t family;
	uint8_t src[16];
	uint32_t dest_qp;
	struct rsw_psn_observer obs;
};

struct receiver {
	const struct rsw_recv_opts *o;
	struct qp_watch *qp;
	unsigned n_qp;
	uint64_t packets, not_roce, acks, untracked;
};

static volatile sig_atomic_t g_stop;
static pcap_t *g_pcap;
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
	if (g_pcap)
		pcap_breakloop(g_pcap);
}

static struct qp_watch *find_qp(struct receiver *r, const struct rsw_pkt_meta *m)
{
	unsigned alen = m->l3 == RSW_L3_IPV6 ? 16 : 4;
	for (unsigned i = 0; i < r->n_qp; i++) {
		struct qp_watch *q = &r->qp[i];
		if (q->dest_qp == m->bth_dest_qp && q->family == m->l3 &&
		    !memcmp(q->src, m->src_ip, alen))
			return q;
	}
	if (r->n_qp == MAX_QPS)
		return NULL;
	struct qp_watch *q = &r->qp[r->n_qp++];
	memset(q, 0, sizeof(*q));
	q->family = m->l3;
	memcpy(q->src, m->src_ip, alen);
	q->dest_qp = m->bth_dest_qp;
	rsw_psn_observer_init(&q->obs, r->o->start_psn);
	return q;
}

/* RC packets that carry a requester's PSN sequence: every RC opcode but the responder's ACK
 * and ATOMIC ACK (REFERENCE.md §1). */
static int rc_data(uint8_t op)
{
	return op < 0x20 && op != 0x11 && op != 0x12;
}

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct receiver *r = (struct receiver *)user;
	struct rsw_pkt_meta m;
	if (rsw_parse(data, h->caplen, &m) || !(m.flags & RSW_META_F_ROCE)) {
		r->not_roce++;
		return;
	}
	if (!rc_data(m.bth_opcode)) {
		r->acks++;
		return;
	}
	r->packets++;
	struct qp_watch *q = find_qp(r, &m);
	if (!q) {
		r->untracked++;
	} else {
		unsigned pad = (data[m.bth_off + 1] >> 4) & 3u;
		unsigned len = m.icrc_off > m.payload_off + pad ? m.icrc_off - m.payload_off - pad : 0;
		rsw_psn_observe(&q->obs, m.bth_psn, len);
	}
	if (r->o->count && r->packets >= r->o->count)
		pcap_breakloop(g_pcap);
}

static pcap_t *open_capture(const char *ifname)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_create(ifname, err);
	struct bpf_program prog;
	if (!p) {
		fprintf(stderr, "rocesw send --receive: %s: %s\n", ifname, err);
		return NULL;
	}
	/* a frame is handed over as it arrives; the headers are all the counting reads, but the
	 * parser checks lengths against the IP header, so whole frames are kept */
	if (pcap_set_immediate_mode(p, 1) || pcap_set_timeout(p, 100) ||
	    pcap_set_buffer_size(p, 64 << 20) ||
	    pcap_set_snaplen(p, 65535) || pcap_activate(p) < 0 ||
	    pcap_compile(p, &prog, "udp dst port 4791", 1, PCAP_NETMASK_UNKNOWN) < 0 ||
	    pcap_setfilter(p, &prog) < 0) {
		fprintf(stderr, "rocesw send --receive: %s: %s\n", ifname, pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	pcap_freecode(&prog);
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "rocesw send --receive: %s is not an Ethernet interface\n", ifname);
		pcap_close(p);
		return NULL;
	}
	return p;
}

static const char *src_str(const struct qp_watch *q, char *buf, size_t n)
{
	return inet_ntop(q->family == RSW_L3_IPV6 ? AF_INET6 : AF_INET, q->src, buf,
			 (socklen_t)n);
}

static void report(const struct receiver *r, const char *ifname, uint64_t dropped)
{
	char ip[64];
	if (r->o->json) {
		json_t *j = json_object(), *qps = json_array();
		json_object_set_new(j, "interface", json_string(ifname));
		json_object_set_new(j, "packets", json_integer((json_int_t)r->packets));
		json_object_set_new(j, "acks", json_integer((json_int_t)r->acks));
		json_object_set_new(j, "not_roce", json_integer((json_int_t)r->not_roce));
		json_object_set_new(j, "untracked", json_integer((json_int_t)r->untracked));
		json_object_set_new(j, "capture_dropped", json_integer((json_int_t)dropped));
		for (unsigned i = 0; i < r->n_qp; i++) {
			const struct rsw_psn_observer *o = &r->qp[i].obs;
			json_array_append_new(qps, json_pack(
				"{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				"src", src_str(&r->qp[i], ip, sizeof(ip)), "dest_qp",
				(int)r->qp[i].dest_qp, "packets", (json_int_t)o->packets,
				"payload_bytes", (json_int_t)o->bytes,
				"ooo_packets", (json_int_t)o->c.ooo_packets,
				"ooo_max_distance", (json_int_t)o->c.ooo_max_distance,
				"reorder_max_packets", (json_int_t)o->c.reorder_max_packets,
				"reorder_max_bytes", (json_int_t)o->c.reorder_max_bytes,
				"duplicates", (json_int_t)o->duplicates,
				"expected_psn", (json_int_t)(o->epsn & RSW_PSN_MASK)));
		}
		json_object_set_new(j, "qps", qps);
		json_dumpf(j, stdout, JSON_INDENT(1));
		printf("\n");
		json_decref(j);
		return;
	}
	printf("%s: %" PRIu64 " RoCE RC data packets received (%" PRIu64 " ACKs), %" PRIu64
	       " dropped by the capture\n", ifname, r->packets, r->acks, dropped);
	printf("%-16s %-8s %9s %11s %12s %15s %14s %10s %8s\n", "source", "dest_qp", "packets",
	       "ooo_packets", "max_distance", "reorder_packets", "reorder_bytes", "duplicates",
	       "next_psn");
	for (unsigned i = 0; i < r->n_qp; i++) {
		const struct rsw_psn_observer *o = &r->qp[i].obs;
		printf("%-16s 0x%06x %9" PRIu64 " %11" PRIu64 " %12" PRIu64 " %15" PRIu64 " %14"
		       PRIu64 " %10" PRIu64 " %8" PRIu64 "\n", src_str(&r->qp[i], ip, sizeof(ip)),
		       r->qp[i].dest_qp, o->packets, o->c.ooo_packets, o->c.ooo_max_distance,
		       o->c.reorder_max_packets, o->c.reorder_max_bytes, o->duplicates,
		       o->epsn & RSW_PSN_MASK);
	}
}

int rsw_send_receive(const char *ifname, const struct rsw_recv_opts *o)
{
	struct receiver r = {.o = o};
	r.qp = calloc(MAX_QPS, sizeof(*r.qp));
	if (!r.qp) {
		fprintf(stderr, "rocesw send --receive: out of memory\n");
		return 1;
	}
	g_pcap = open_capture(ifname);
	if (!g_pcap) {
		free(r.qp);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "rocesw send: receiving on %s\n", ifname);
	int rc = 0;
	while (!g_stop && !(o->count && r.packets >= o->count)) {
		int n = pcap_dispatch(g_pcap, -1, on_frame, (u_char *)&r);
		if (n == PCAP_ERROR) {
			fprintf(stderr, "rocesw send --receive: %s: %s\n", ifname,
				pcap_geterr(g_pcap));
			rc = 1;
			break;
		}
	}
	struct pcap_stat st = {0};
	pcap_stats(g_pcap, &st);
	report(&r, ifname, st.ps_drop + st.ps_ifdrop);
	pcap_close(g_pcap);
	g_pcap = NULL;
	for (unsigned i = 0; i < r.n_qp; i++)
		rsw_psn_observer_free(&r.qp[i].obs);
	free(r.qp);
	return rc;
}
