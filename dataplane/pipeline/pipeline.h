/* The switch's pipeline, written once: parse → MAC control → classify and ingress tables (port
 * checks, QoS, LPM, ECMP/ARS, next hop) → egress rewrite → traffic-manager admission onto the
 * VOQ of (egress port, queue). Every front end (live workers, replay switches, inspect, the
 * zone hash lab, the control socket's explain) calls it and acts on its verdict with its own
 * counters, events and scheduling. It never frees a frame: the caller owns every frame whose
 * verdict is not RSW_VERDICT_ENQUEUED with a traffic manager. */
#ifndef RSW_PIPELINE_H
#define RSW_PIPELINE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "dataplane/pkt/pkt_meta.h"
#include "dataplane/tables/fib.h"
#include "dataplane/tables/ingress.h"
#include "dataplane/tm/tm.h"
#include "trace.h"

/* What a front end brings to the pipeline. */
struct rsw_pipeline {
	const struct rsw_fib *fib;    /* the switch's tables; NULL drops data frames: no_tables */
	struct rsw_tm *tm;            /* NULL: the verdict stops before admission (offline views) */
	/* the TM's settings: NULL, the tables' own (fib->tm); replay hands the switches whose
	 * settings are the same one copy of them, which then stays in the caches */
	const struct rsw_tm_config *tc;
	struct rsw_ingress_ctx *ictx; /* RANDOM hash state and arrival time */
	uint8_t punt;                 /* the switch has a CPU: ARP/ND and to_switch go to it */
	uint8_t verify_icrc;          /* check the ICRC of RoCE data frames (rsw_verdict.icrc) */
};

enum rsw_verdict_kind {
	RSW_VERDICT_DROP = 0,    /* .drop says why; the caller frees the frame */
	RSW_VERDICT_ENQUEUED,    /* on the VOQ (.port, .queue); with no TM: would be offered to it */
	RSW_VERDICT_MAC_CONTROL, /* PFC or PAUSE (meta: l2_kind, class enable, times): the caller
				  * applies it to the port's pause state and frees the frame */
	RSW_VERDICT_PUNT,        /* ARP/ND or addressed to the switch: to the CPU (pipeline.punt) */
};

/* Which stage decided: the first that did not hand the frame on. */
enum rsw_stage {
	RSW_STAGE_RX = 0, /* the frame as received (multi-segment mbufs) */
	RSW_STAGE_PARSE,
	RSW_STAGE_MAC_CONTROL,
	RSW_STAGE_INGRESS, /* port, QoS, MAC/IP checks, LPM, ECMP, next hop */
	RSW_STAGE_TM,      /* admission and the VOQ */
};

struct rsw_verdict {
	uint8_t kind;     /* enum rsw_verdict_kind */
	uint8_t stage;    /* enum rsw_stage that decided */
	uint8_t drop;     /* enum rsw_drop_reason when dropped */
	uint8_t lossless; /* dropped in the TM from a lossless PG: what the lossless invariant
			   * counts (docs/tm.md); other drops happen before any PG holds the frame */
	uint16_t port;    /* egress port (enqueued, or dropped in the TM) */
	uint8_t queue;    /* VOQ of port */
	int8_t icrc;      /* with verify_icrc: 1 ok, 0 bad; -1 not checked */
};

/* One frame of len bytes entering in_port: frame is writable (the rewrite edits it) and, with a
 * TM, the data of mb (mb NULL: the decisions only, the TM not asked). *m gets the parsed fields
 * and the ingress decisions; tr, when not NULL, what each stage decided (trace.h). */
struct rsw_verdict rsw_pipeline_frame(const struct rsw_pipeline *p, uint16_t in_port,
				      uint8_t *frame, uint32_t len, struct rte_mbuf *mb,
				      struct rsw_pkt_meta *m, struct rsw_trace *tr);

/* A burst of at most RSW_INGRESS_BURST_MAX mbufs from in_port (p->tm required): the same
 * decisions as rsw_pipeline_frame in arrival order, stage by stage over the burst so the
 * table lookups of one stage overlap (one FIB lookup for the burst, admission per VOQ).
 * Returns the burst's bytes as received: the enqueued mbufs are the TM's once it returns (the
 * port's owner may already be sending them), so the caller reads only meta[] and v[] of those. */
uint64_t rsw_pipeline_burst(const struct rsw_pipeline *p, uint16_t in_port,
			    struct rte_mbuf **pkts, unsigned n, struct rsw_pkt_meta meta[],
			    struct rsw_verdict v[]);

/* The verdict's name for tests and views: "enqueued", "mac_control", "punt", or the drop
 * reason's name. */
const char *rsw_verdict_name(const struct rsw_verdict *v);

#endif
