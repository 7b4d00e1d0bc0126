/* `rocesw hash explain --config SWITCH --pcap F --frame N`: frame N through a switch's own
 * tables, as the pipeline traced it. Frames 1..N enter one port at their capture times, so a
 * group with ARS has the flowlet state and port quality the earlier frames left (the lab's
 * ports: control/labs/ars_ports.h). The document is the control socket's hash_explain's. */
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_hash_explain.h"
#include "hash_explain_print.h"
#include "control/labs/ars_ports.h"
#include "dataplane/config/config.h"
#include "dataplane/pipeline/pipeline.h"
#include "dataplane/pipeline/trace_explain.h"
#include "dataplane/tables/switch.h"
#include "eal_quiet.h"

#define ERR "rocesw hash explain: "

static struct rsw_switch *load(const char *config, const char *in_name, uint16_t *in_port)
{
	char err[1024];
	struct rsw_switch *sw = NULL;
	if (rsw_eal_init_quiet("rocesw") < 0 || !(sw = rsw_switch_new(NULL, err, sizeof(err))) ||
	    rsw_config_apply(sw, config, err, sizeof(err)) < 0) {
		if (sw)
			fprintf(stderr, ERR "%s\n", err);
		rsw_switch_free(sw);
		return NULL;
	}
	*in_port = 0;
	if (in_name) {
		int pi = rsw_state_port_index(sw->state, in_name);
		if (pi < 0) {
			fprintf(stderr, ERR "--in-port: no port named '%s' in %s\n", in_name, config);
			rsw_switch_free(sw);
			return NULL;
		}
		*in_port = (uint16_t)pi;
	}
	return sw;
}

/* Frames 1..want of the capture through the switch; the trace and verdict of frame want. */
static int run_frames(const char *pcap, unsigned want, const struct rsw_fib *fib,
		      uint16_t in_port, struct rsw_trace *tr, struct rsw_verdict *v)
{
	char perr[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(pcap, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!pc) {
		fprintf(stderr, ERR "%s: %s\n", pcap, perr);
		return -1;
	}
	static struct rsw_ars_ports ports;
	static uint8_t buf[65536];
	memset(&ports, 0, sizeof(ports));
	struct rsw_ingress_ctx ictx = {.rnd = 0x9E3779B97F4A7C15ull};
	struct rsw_pipeline p = {.fib = fib, .ictx = &ictx};
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned n = 0;
	int rc;
	while (n < want && (rc = pcap_next_ex(pc, &h, &data)) == 1) {
		n++;
		uint32_t len = h->caplen < sizeof(buf) ? h->caplen : (uint32_t)sizeof(buf);
		memcpy(buf, data, len);
		ictx.now_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		rsw_ars_ports_advance(&ports, fib, ictx.now_ns);
		struct rsw_pkt_meta m;
		*v = rsw_pipeline_frame(&p, in_port, buf, len, NULL, &m, n == want ? tr : NULL);
		if (v->kind == RSW_VERDICT_ENQUEUED)
			rsw_ars_ports_enqueue(&ports, v->port, h->len);
	}
	if (n < want) {
		fprintf(stderr, ERR "%s: %s\n", pcap, rc == PCAP_ERROR ? pcap_geterr(pc)
								: "no such frame");
		pcap_close(pc);
		return -1;
	}
	pcap_close(pc);
	return 0;
}

int rsw_hash_explain_switch(const char *config, const char *pcap, unsigned frame_no,
			    const char *in_name, int json)
{
	uint16_t in_port;
	struct rsw_switch *sw = load(config, in_name, &in_port);
	if (!sw)
		return 1;
	const struct rsw_fib *fib = rsw_switch_fib(sw);
	static struct rsw_trace tr;
	struct rsw_verdict v;
	if (run_frames(pcap, frame_no, fib, in_port, &tr, &v) < 0) {
		rsw_switch_free(sw);
		return 1;
	}
	json_t *o = rsw_trace_explain_json(&tr, &v, fib);
	json_object_set_new(o, "frame", json_integer(frame_no));
	rsw_hash_explain_print(o, json);
	json_decref(o);
	rsw_switch_free(sw);
	return 0;
}
