/* `rocesw hash explain`: for one frame of a capture, the bytes each policy feeds to the hash
 * (labelled by field, in order), the hash value, the bucket and the member. */
#include <getopt.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd_hash_explain.h"
#include "hash_explain_print.h"
#include "dataplane/config/config.h"
#include "ctl_client.h"
#include "dataplane/hash/hash_algo.h"
#include "dataplane/hash/hash_policy.h"
#include "dataplane/hash/resilient.h"
#include "dataplane/pkt/drop_reason.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/tables/table_types.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw hash explain --policy F --pcap F [--frame N] [--members N]\n"
		"                           [--buckets N | --no-resilient] [--in-port N] [--json]\n"
		"       rocesw hash explain --config SWITCH --pcap F [--frame N] [--in-port NAME]\n"
		"                           [--json]\n"
		"       rocesw hash explain --src IP --dst IP [--sport P] [--dport P] [--qp N]\n"
		"                           [--in-port NAME] [--socket PATH] [--json]\n"
		"\n"
		"For frame N (1-based, as Wireshark numbers them; default 1) of the capture: the bytes\n"
		"each policy of F feeds to the hash, field by field, in order; the hash value; the\n"
		"bucket and the member among N (default 8; resilient table of 4096 buckets unless\n"
		"--no-resilient).\n"
		"\n"
		"With --config: frames 1..N enter port NAME (default the first) of that switch config at\n"
		"their capture times, and frame N is shown as the switch's pipeline decided it: route,\n"
		"group, policy, key bytes, hash, bucket, member, and for a group with ARS the flowlet\n"
		"entry, each member's load and queue averages and bands, the member chosen and why\n"
		"(the lab's ports drain at their configured speed; docs/hash-lab.md).\n"
		"\n"
		"With --src: on the live tables of a running dataplane (its control socket), for a\n"
		"RoCEv2 packet with these addresses, UDP ports (default 49152 -> 4791) and destination\n"
		"QP entering port NAME (default the first): the route's group and policy, the bytes fed\n"
		"to its hash, the hash, the bucket, the member, the next hop and the egress port.\n");
}

/* --src ...: the dataplane's hash_explain on its live tables. */
static int live_explain(const char *src, const char *dst, long long sport, long long dport,
			long long qp, const char *in, const char *sock, int json)
{
	if (!src || !dst) {
		fprintf(stderr, "rocesw hash explain: give both --src and --dst\n");
		return 2;
	}
	json_t *req = json_pack("{s:s, s:s, s:s}", "op", "hash_explain", "src", src, "dst", dst);
	if (sport >= 0)
		json_object_set_new(req, "sport", json_integer(sport));
	if (dport >= 0)
		json_object_set_new(req, "dport", json_integer(dport));
	if (qp >= 0)
		json_object_set_new(req, "qp", json_integer(qp));
	if (in)
		json_object_set_new(req, "in_port", json_string(in));
	char err[1024];
	json_t *r = rsw_ctl_call(rsw_ctl_socket_path(sock), req, err, sizeof(err));
	json_decref(req);
	if (!r) {
		fprintf(stderr, "rocesw hash explain: %s\n", err);
		return 1;
	}
	rsw_hash_explain_print(r, json);
	json_decref(r);
	return 0;
}

/* Frame number want (1-based) of the capture, parsed. */
static int read_frame(const char *pcap, unsigned want, uint8_t *buf, uint32_t *len,
		      struct rsw_pkt_meta *m)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(pcap, perr);
	if (!p) {
		fprintf(stderr, "rocesw hash explain: %s: %s\n", pcap, perr);
		return -1;
	}
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned n = 0;
	int rc;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1 && ++n < want)
		;
	if (rc != 1) {
		fprintf(stderr, "rocesw hash explain: %s: %s\n", pcap,
			rc == -1 ? pcap_geterr(p) : "no such frame");
		pcap_close(p);
		return -1;
	}
	*len = h->caplen < 65536 ? h->caplen : 65536;
	memcpy(buf, data, *len);
	pcap_close(p);
	unsigned reason = rsw_parse(buf, *len, m);
	if (reason || m->l3 == RSW_L3_NONE) {
		fprintf(stderr, "rocesw hash explain: %s frame %u is not hashed: %s\n", pcap, want,
			reason ? rsw_drop_reason_name(reason) : "not an IP packet");
		return -1;
	}
	return 0;
}

/* Member of a hash: a resilient table laid out round-robin (as a new group), or modulo. */
static unsigned member_of(uint32_t h, unsigned members, uint32_t buckets)
{
	if (!buckets)
		return h % members;
	struct rsw_rbt rbt = {0};
	if (rsw_rbt_init(&rbt, buckets, (uint16_t)members) < 0)
		return 0;
	unsigned m = rbt.bucket[h % buckets];
	rsw_rbt_free(&rbt);
	return m;
}

/* The frame's addresses, ports and RoCE header, as the tables' first line. */
static void print_frame(unsigned frame_no, const struct rsw_pkt_meta *m)
{
	char s[64], d[64];
	struct rsw_ip a = {.family = m->l3 == RSW_L3_IPV6 ? 6 : 4}, b = a;
	memcpy(a.a, m->src_ip, 16);
	memcpy(b.a, m->dst_ip, 16);
	printf("frame %u: %s -> %s protocol %u ports %u -> %u", frame_no,
	       rsw_ip_str(&a, s, sizeof(s)), rsw_ip_str(&b, d, sizeof(d)), m->ip_proto, m->sport,
	       m->dport);
	if (m->flags & RSW_META_F_ROCE)
		printf(" RoCE opcode 0x%02x dest QP 0x%06x", m->bth_opcode, m->bth_dest_qp);
	printf("\n");
}

/* One policy on the frame: its key bytes field by field, the hash, the bucket and the member;
 * printed unless json, and returned as JSON. */
static json_t *explain_policy(const struct rsw_named_policy *np, const uint8_t *frame,
			      const struct rsw_pkt_meta *m, unsigned members, uint32_t buckets,
			      int json)
{
	uint8_t key[RSW_HASH_KEY_MAX];
	size_t klen = rsw_hash_key(&np->pol, frame, m, key);
	uint64_t rnd = 0x9E3779B97F4A7C15ull;
	uint32_t h = rsw_hash_packet(&np->pol, frame, m, &rnd);
	uint32_t bucket = buckets ? h % buckets : h % members;
	uint32_t member = member_of(h, members, buckets);
	const char *names[RSW_HF_COUNT + RSW_UDF_MAX];
	char udf_names[RSW_UDF_MAX][RSW_UDF_LABEL_MAX];
	unsigned lens[RSW_HF_COUNT + RSW_UDF_MAX];
	unsigned parts = rsw_hash_key_parts(&np->pol, m->l3, names, lens, udf_names), off = 0;
	json_t *o = json_object(), *fields = json_array();
	json_object_set_new(o, "name", json_string(np->name));
	json_object_set_new(o, "algorithm", json_string(rsw_hash_algo_name(np->pol.algo)));
	if (!json)
		printf("policy %s (%s, seed %u, offset %u)\n", np->name,
		       rsw_hash_algo_name(np->pol.algo), np->pol.seed, np->pol.offset);
	for (unsigned k = 0; k < parts && off + lens[k] <= klen; k++) {
		char hex[3 * 16 + 1] = "";
		for (unsigned b = 0; b < lens[k]; b++)
			snprintf(hex + 3 * b, 4, "%02x ", key[off + b]);
		hex[3 * lens[k] - 1] = 0;
		if (!json)
			printf("  %-48s %s\n", hex, names[k]);
		json_t *fo = json_object();
		json_object_set_new(fo, "field", json_string(names[k]));
		json_object_set_new(fo, "bytes", json_string(hex));
		json_array_append_new(fields, fo);
		off += lens[k];
	}
	if (!json)
		printf("  hash 0x%04x  bucket %u of %u  member %u of %u\n", h, bucket,
		       buckets ? buckets : members, member, members);
	json_object_set_new(o, "key", fields);
	json_object_set_new(o, "hash", json_integer(h));
	json_object_set_new(o, "bucket", json_integer(bucket));
	json_object_set_new(o, "member", json_integer(member));
	return o;
}

/* Frame frame_no of the capture under every policy of the policy file. Returns the exit status. */
static int explain_capture(const char *policy, const char *pcap, unsigned frame_no,
			   uint16_t in_port, unsigned members, uint32_t buckets, int json)
{
	char err[1024];
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_config_hash_policies(policy, txn, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", txn ? err : "out of memory");
		rsw_txn_free(txn);
		return 1;
	}
	static uint8_t frame[65536];
	uint32_t flen;
	struct rsw_pkt_meta m;
	if (read_frame(pcap, frame_no, frame, &flen, &m) < 0) {
		rsw_txn_free(txn);
		return 1;
	}
	m.in_port = in_port;
	json_t *root = json_object(), *arr = json_array();
	json_object_set_new(root, "frame", json_integer(frame_no));
	if (!json)
		print_frame(frame_no, &m);
	for (size_t w = 0; w < rsw_txn_len(txn); w++)
		json_array_append_new(arr, explain_policy(&rsw_txn_at(txn, w)->u.policy, frame, &m,
							  members, buckets, json));
	json_object_set_new(root, "policies", arr);
	if (json) {
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("\n");
	}
	json_decref(root);
	rsw_txn_free(txn);
	return 0;
}

int rsw_cmd_hash_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'}, {"pcap", required_argument, NULL, 'c'},
		{"frame", required_argument, NULL, 'n'}, {"members", required_argument, NULL, 'm'},
		{"buckets", required_argument, NULL, 'b'}, {"no-resilient", no_argument, NULL, 'r'},
		{"in-port", required_argument, NULL, 'i'}, {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'}, {"src", required_argument, NULL, 'S'},
		{"dst", required_argument, NULL, 'D'}, {"sport", required_argument, NULL, 's'},
		{"dport", required_argument, NULL, 'd'}, {"qp", required_argument, NULL, 'q'},
		{"socket", required_argument, NULL, 'k'}, {"config", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	const char *src = NULL, *dst = NULL, *in_name = NULL, *sock = NULL;
	long long sport = -1, dport = -1, qp = -1;
	const char *policy = NULL, *pcap = NULL, *config = NULL;
	unsigned frame_no = 1, members = 8, in_port = 0;
	uint32_t buckets = 4096;
	int json = 0, c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		unsigned long v = 0;
		if (c == 'i')
			in_name = optarg;
		if (c == 'n' || c == 'm' || c == 'b' || c == 's' || c == 'd' || c == 'q') {
			v = strtoul(optarg, &end, 0);
			if (!*optarg || *end) {
				fprintf(stderr, "rocesw hash explain: a number was expected, got '%s'\n",
					optarg);
				return 2;
			}
		}
		switch (c) {
		case 'p': policy = optarg; break;
		case 'c': pcap = optarg; break;
		case 'n': frame_no = (unsigned)v; break;
		case 'm': members = (unsigned)v; break;
		case 'b': buckets = (uint32_t)v; break;
		case 'r': buckets = 0; break;
		case 'i': break;
		case 'S': src = optarg; break;
		case 'D': dst = optarg; break;
		case 's': sport = (long long)v; break;
		case 'd': dport = (long long)v; break;
		case 'q': qp = (long long)v; break;
		case 'k': sock = optarg; break;
		case 'C': config = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (src || dst)
		return live_explain(src, dst, sport, dport, qp, in_name, sock, json);
	if (config) {
		if (policy || !pcap || optind < argc || frame_no < 1) {
			fprintf(stderr, "rocesw hash explain: --config takes --pcap and --frame >= 1, "
					"not --policy\n");
			return 2;
		}
		return rsw_hash_explain_switch(config, pcap, frame_no, in_name, json);
	}
	if (in_name) {
		in_port = (unsigned)strtoul(in_name, &end, 0);
		if (!*in_name || *end) {
			fprintf(stderr, "rocesw hash explain: --in-port takes a number with --pcap\n");
			return 2;
		}
	}
	if (!policy || !pcap || optind < argc || frame_no < 1 || members < 1 || members > 256 ||
	    buckets > 65536) {
		fprintf(stderr, "rocesw hash explain: give --policy and --pcap; --frame >= 1, "
				"--members 1..256, --buckets up to 65536\n");
		usage(stderr);
		return 2;
	}
	return explain_capture(policy, pcap, frame_no, (uint16_t)in_port, members, buckets, json);
}
