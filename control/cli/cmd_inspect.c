/* `rocesw inspect`: the pipeline (pipeline.h) over a capture, one record per frame: the parser's
 * fields, and with a config the ingress tables' decisions; --trace adds each stage's record. */
#include <getopt.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dataplane/config/config.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/roce_hdr.h"
#include "dataplane/pipeline/pipeline.h"
#include "eal_quiet.h"

static void inspect_usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw inspect PCAP [--config F] [--in-port NAME] [--icrc] [--trace] [--json]\n"
		"\n"
		"Runs every frame of PCAP (Ethernet link type) through the parser and prints what it\n"
		"found. With --config, also through the ingress tables of that switch config, as if\n"
		"received on --in-port (default: the first port).\n"
		"\n"
		"  --json       one JSON object per line: frame, parse, vlan_pcp, src_ip, dst_ip,\n"
		"               dscp, ecn, ttl, udp_sport, udp_dport, bth_opcode, bth_dest_qp,\n"
		"               bth_psn, bth_becn, pfc_class_enable, pfc_time; with --config also\n"
		"               in_port, tc, pg, egress_port, hash, bucket, ecmp_member, drop\n"
		"  --icrc       verify the ICRC of RoCE packets (field icrc: ok|bad)\n"
		"  --trace      what each stage of the pipeline decided, one line per stage under\n"
		"               the frame (JSON: field trace, an array of those lines)\n"
		"  --config F   a switch config (see docs/config.md)\n"
		"  --in-port N  ingress port name for --config\n"
		"\n"
		"Fields that do not apply to a frame are null. Exit status: 0, 1 on an unreadable or\n"
		"truncated capture or a bad config, 2 on bad usage.\n");
}

static json_t *ip_json(const struct rsw_pkt_meta *m, const uint8_t *a)
{
	struct rsw_ip ip = {.family = m->l3 == RSW_L3_IPV6 ? 6 : 4};
	char buf[64];
	memcpy(ip.a, a, 16);
	return json_string(rsw_ip_str(&ip, buf, sizeof(buf)));
}

/* m: the parser's fields; d: the ingress decisions. */
static json_t *record(unsigned long frame, const struct rsw_pkt_meta *m,
		      const struct rsw_pkt_meta *d, unsigned parse_rc, int icrc,
		      const struct rsw_fib *fib)
{
	json_t *o = json_object();
	int ip = m->l3 != RSW_L3_NONE && (parse_rc == 0 || m->ttl || m->ip_proto);
	int l4 = (m->flags & (RSW_META_F_UDP | RSW_META_F_TCP)) != 0;
	int roce = m->bth_off != 0 && (parse_rc == 0 || parse_rc > RSW_DROP_BTH_TRUNCATED);
	int pfc = m->l2_kind == RSW_L2_PFC;

	json_object_set_new(o, "frame", json_integer((json_int_t)frame));
	json_object_set_new(o, "parse", json_string(parse_rc ? rsw_drop_reason_name(parse_rc) : "ok"));
	json_object_set_new(o, "vlan_pcp", m->n_vlan ? json_integer(m->vlan_tci[0] >> 13) : json_null());
	json_object_set_new(o, "src_ip", ip ? ip_json(m, m->src_ip) : json_null());
	json_object_set_new(o, "dst_ip", ip ? ip_json(m, m->dst_ip) : json_null());
	json_object_set_new(o, "dscp", ip ? json_integer(m->dscp) : json_null());
	json_object_set_new(o, "ecn", ip ? json_integer(m->ecn) : json_null());
	json_object_set_new(o, "ttl", ip ? json_integer(m->ttl) : json_null());
	json_object_set_new(o, "udp_sport",
			    l4 && (m->flags & RSW_META_F_UDP) ? json_integer(m->sport) : json_null());
	json_object_set_new(o, "udp_dport",
			    l4 && (m->flags & RSW_META_F_UDP) ? json_integer(m->dport) : json_null());
	json_object_set_new(o, "bth_opcode", roce ? json_integer(m->bth_opcode) : json_null());
	json_object_set_new(o, "bth_dest_qp", roce ? json_integer(m->bth_dest_qp) : json_null());
	json_object_set_new(o, "bth_psn", roce ? json_integer(m->bth_psn) : json_null());
	json_object_set_new(o, "bth_becn",
			    roce ? json_integer((m->bth_becn_fecn & RSW_BTH_BECN) != 0) : json_null());
	json_object_set_new(o, "pfc_class_enable", pfc ? json_integer(m->pfc_class_enable) : json_null());
	if (pfc || m->l2_kind == RSW_L2_PAUSE) {
		json_t *a = json_array();
		for (int i = 0; i < (pfc ? 8 : 1); i++)
			json_array_append_new(a, json_integer(m->pfc_time[i]));
		json_object_set_new(o, "pfc_time", a);
	} else {
		json_object_set_new(o, "pfc_time", json_null());
	}
	if (icrc >= -1)
		json_object_set_new(o, "icrc", icrc < 0 ? json_null() : json_string(icrc ? "ok" : "bad"));
	if (fib) {
		int fwd = !d->drop && d->l2_kind == RSW_L2_DATA;
		int routed = d->drop > RSW_DROP_ROCE_BAD_PAD || (fwd && d->l3);
		json_object_set_new(o, "in_port", json_string(fib->ports[d->in_port].name));
		json_object_set_new(o, "tc", routed ? json_integer(d->tc) : json_null());
		json_object_set_new(o, "pg", routed ? json_integer(d->pg) : json_null());
		json_object_set_new(o, "egress_port",
				    fwd ? json_string(fib->ports[d->egress_port].name) : json_null());
		json_object_set_new(o, "hash", d->via_group && d->drop != RSW_DROP_ECMP_GROUP_EMPTY
						       ? json_integer(d->hash) : json_null());
		json_object_set_new(o, "bucket", d->via_group && d->drop != RSW_DROP_ECMP_GROUP_EMPTY
							 ? json_integer(d->bucket) : json_null());
		json_object_set_new(o, "ecmp_member", d->via_group && d->drop != RSW_DROP_ECMP_GROUP_EMPTY
							      ? json_integer(d->member) : json_null());
		const char *disp = m->l2_kind == RSW_L2_PFC ? "pfc_consumed"
				 : m->l2_kind == RSW_L2_PAUSE ? "pause_consumed"
				 : d->drop ? rsw_drop_reason_name(d->drop) : NULL;
		json_object_set_new(o, "drop", disp ? json_string(disp) : json_null());
	}
	return o;
}

static void print_text_header(int with_fib)
{
	printf("%6s  %-22s %-34s %-8s %-13s %-28s %-9s %-8s", "frame", "parse", "src -> dst",
	       "dscp/ecn", "ttl sport>dport", "", "qp", "psn");
	if (with_fib)
		printf(" %-3s %-12s %-6s %-6s %s", "tc", "egress", "hash", "member", "drop");
	printf("\n");
}

static void print_text(json_t *o, int with_fib)
{
	char addr[80] = "-", q[32] = "-", psn[16] = "-", dsc[16] = "-", ports[24] = "-", op[40] = "";
	json_t *v;
	if (json_is_string(v = json_object_get(o, "src_ip")))
		snprintf(addr, sizeof(addr), "%s -> %s", json_string_value(v),
			 json_string_value(json_object_get(o, "dst_ip")));
	if (json_is_integer(v = json_object_get(o, "dscp")))
		snprintf(dsc, sizeof(dsc), "%lld/%lld", json_integer_value(v),
			 json_integer_value(json_object_get(o, "ecn")));
	if (json_is_integer(v = json_object_get(o, "udp_sport")))
		snprintf(ports, sizeof(ports), "%lld %lld>%lld",
			 json_integer_value(json_object_get(o, "ttl")), json_integer_value(v),
			 json_integer_value(json_object_get(o, "udp_dport")));
	if (json_is_integer(v = json_object_get(o, "bth_opcode"))) {
		char nb[40];
		snprintf(op, sizeof(op), "%s", rsw_roce_opcode_name((uint8_t)json_integer_value(v), nb,
								    sizeof(nb)));
		snprintf(q, sizeof(q), "0x%06llx", json_integer_value(json_object_get(o, "bth_dest_qp")));
		snprintf(psn, sizeof(psn), "%lld", json_integer_value(json_object_get(o, "bth_psn")));
	}
	if (json_is_integer(v = json_object_get(o, "pfc_class_enable")))
		snprintf(op, sizeof(op), "PFC cev=0x%02llx", json_integer_value(v));
	else if (json_is_array(v = json_object_get(o, "pfc_time")))
		snprintf(op, sizeof(op), "PAUSE %lld", json_integer_value(json_array_get(v, 0)));
	printf("%6lld  %-22s %-34s %-8s %-13s %-28s %-9s %-8s",
	       json_integer_value(json_object_get(o, "frame")),
	       json_string_value(json_object_get(o, "parse")), addr, dsc, ports, op, q, psn);
	if (with_fib) {
		char tc[8] = "-", hash[16] = "-", mem[16] = "-";
		const char *eg = "-", *drop = "";
		if (json_is_integer(v = json_object_get(o, "tc")))
			snprintf(tc, sizeof(tc), "%lld", json_integer_value(v));
		if (json_is_integer(v = json_object_get(o, "hash")))
			snprintf(hash, sizeof(hash), "0x%04llx", json_integer_value(v));
		if (json_is_integer(v = json_object_get(o, "ecmp_member")))
			snprintf(mem, sizeof(mem), "%lld", json_integer_value(v));
		if (json_is_string(v = json_object_get(o, "egress_port")))
			eg = json_string_value(v);
		if (json_is_string(v = json_object_get(o, "drop")))
			drop = json_string_value(v);
		printf(" %-3s %-12s %-6s %-6s %s", tc, eg, hash, mem, drop);
	}
	printf("\n");
}

/* An Ethernet capture, or NULL after saying why not. */
static pcap_t *open_capture(const char *path)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!pc) {
		fprintf(stderr, "rocesw inspect: %s: %s\n", path, perr);
		return NULL;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "rocesw inspect: %s: link type %s, expected Ethernet (EN10MB)\n", path,
			pcap_datalink_val_to_name(pcap_datalink(pc)));
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

/* With --config, the switch the frames go through (*sw) and the port they enter (*port).
 * Returns 0, or the exit status after saying what failed. */
static int load_switch(const char *config, const char *in_port, struct rsw_switch **sw,
		       uint16_t *port)
{
	char err[1024];
	if (!config && in_port) {
		fprintf(stderr, "rocesw inspect: --in-port needs --config\n");
		return 2;
	}
	if (!config)
		return 0;
	if (rsw_eal_init_quiet("rocesw") < 0 || !(*sw = rsw_switch_new(NULL, err, sizeof(err))) ||
	    rsw_config_apply(*sw, config, err, sizeof(err)) < 0) {
		if (*sw)
			fprintf(stderr, "rocesw inspect: %s\n", err);
		return 1;
	}
	if (in_port) {
		int pi = rsw_state_port_index((*sw)->state, in_port);
		if (pi < 0) {
			fprintf(stderr, "rocesw inspect: --in-port: no port named '%s' in %s\n",
				in_port, config);
			return 1;
		}
		*port = (uint16_t)pi;
	}
	return 0;
}

/* The trace's lines: under the text line, or as the record's field "trace". */
static void add_trace(json_t *o, const struct rsw_trace *tr, const struct rsw_fib *fib, int json)
{
	json_t *a = json_array();
	for (unsigned i = 0; i < tr->n; i++) {
		char line[512];
		rsw_trace_rec_format(tr, &tr->rec[i], fib, line, sizeof(line));
		if (json)
			json_array_append_new(a, json_string(line));
		else
			printf("        %s\n", line);
	}
	if (json)
		json_object_set_new(o, "trace", a);
	else
		json_decref(a);
}

/* Every frame through the pipeline (with no tables when fib is NULL: then only the parser's
 * part is shown), printed as it goes. Returns the exit status. */
static int inspect_frames(pcap_t *pc, const char *path, const struct rsw_fib *fib, uint16_t port,
			  int icrc, int trace, int json)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long frame = 0;
	int rc, status = 0;
	struct rsw_ingress_ctx ictx = {.rnd = 0x9E3779B97F4A7C15ull};
	struct rsw_pipeline p = {.fib = fib, .ictx = &ictx};
	static struct rsw_trace tr;
	uint8_t *buf = malloc(65536);
	if (!json)
		print_text_header(fib != NULL);
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct rsw_pkt_meta m;
		frame++;
		uint32_t len = h->caplen > 65535 ? 65535 : h->caplen;
		memcpy(buf, data, len);
		/* the capture's time (nanosecond precision): ARS's idle time is measured on it */
		ictx.now_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		struct rsw_verdict v = rsw_pipeline_frame(&p, port, buf, len, NULL, &m, &tr);
		unsigned prc = v.stage == RSW_STAGE_PARSE ? v.drop : 0;
		/* the frame as captured: the rewrite changed buf's TTL and MACs */
		int ic = icrc ? rsw_icrc_check(data, &tr.parsed) : -2;
		json_t *o = record(frame, &tr.parsed, &m, prc, ic, fib);
		if (json) {
			if (trace)
				add_trace(o, &tr, fib, 1);
			char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
			puts(s);
			free(s);
		} else {
			print_text(o, fib != NULL);
			if (trace)
				add_trace(o, &tr, fib, 0);
		}
		json_decref(o);
	}
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "rocesw inspect: %s: after frame %lu: %s\n", path, frame,
			pcap_geterr(pc));
		status = 1;
	}
	free(buf);
	return status;
}

int rsw_cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'}, {"in-port", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},         {"icrc", no_argument, NULL, 'i'},
		{"trace", no_argument, NULL, 't'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *config = NULL, *in_port = NULL;
	int json = 0, icrc = 0, trace = 0, c;

	while ((c = getopt_long(argc, argv, "c:p:jith", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'p': in_port = optarg; break;
		case 'j': json = 1; break;
		case 'i': icrc = 1; break;
		case 't': trace = 1; break;
		case 'h': inspect_usage(stdout); return 0;
		default: inspect_usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		inspect_usage(stderr);
		return 2;
	}
	const char *path = argv[optind];
	pcap_t *pc = open_capture(path);
	if (!pc)
		return 1;
	struct rsw_switch *sw = NULL;
	uint16_t port = 0;
	int status = load_switch(config, in_port, &sw, &port);
	if (status == 0)
		status = inspect_frames(pc, path, sw ? rsw_switch_fib(sw) : NULL, port, icrc, trace,
					       json);
	rsw_switch_free(sw);
	pcap_close(pc);
	return status;
}
