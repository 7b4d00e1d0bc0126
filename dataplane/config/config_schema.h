/* The declarative schema of the CONFIG_DB tables rocesw reads: for each table its key shape and,
 * for each field, type, range, default, units, whether rocesw models it, and help text. The
 * compiler validates every field against it (config_fields.c words the errors from it), and
 * docs/config.md's field tables are printed from it (`rocesw check-config --schema-markdown`).
 * Names, types and ranges follow SONiC's sonic-yang-models where SONiC has the table. */
#ifndef RSW_CONFIG_SCHEMA_H
#define RSW_CONFIG_SCHEMA_H

#include <stdint.h>
#include <stdio.h>

enum rsw_ftype {
	RSW_FT_UINT,  /* decimal or 0x integer lo..hi; words (e.g. "line") may stand for values */
	RSW_FT_INT,   /* signed decimal lo..hi */
	RSW_FT_BOOL,  /* true/false (yes/no, on/off) */
	RSW_FT_ENUM,  /* one of words */
	RSW_FT_NAME,  /* 1..RSW_NAME_MAX-1 characters */
	RSW_FT_MAC,   /* 02:00:00:00:00:01 */
	RSW_FT_PRIOS, /* "3,4": priorities 0..7 */
	RSW_FT_TEXT,  /* any scalar */
	RSW_FT_CUSTOM /* read by the compiler itself (lists, references, ranges); help says how */
};

enum rsw_fmodel {
	RSW_FM_MODELLED,   /* read and used */
	RSW_FM_IGNORED,    /* accepted, no effect here (help says why) */
	RSW_FM_UNMODELLED, /* SONiC has it, rocesw does not: an error in a rocesw file, a warning
			    * in a SONiC config_db.json */
};

struct rsw_field_schema {
	const char *name; /* "*": any key (the table is a map, e.g. DSCP -> TC) */
	uint8_t type, model, required;
	long long lo, hi;
	const char *words; /* RSW_FT_ENUM: "a|b|c"; RSW_FT_UINT: words also accepted */
	const char *dflt, *units, *help;
};

struct rsw_table_schema {
	const char *name;
	const char *key; /* key shape, e.g. "PORT|IP" */
	uint8_t model;   /* RSW_FM_MODELLED, or RSW_FM_UNMODELLED for a SONiC table not read */
	uint8_t rocesw_only;
	const char *help;
	const struct rsw_field_schema *fields; /* ends with name == NULL */
};

/* Field indices, in the order of each table's fields in config_schema.c. */
enum { DM_HOSTNAME, DM_MAC, DM_DMAC_CHECK, DM_TYPE, DM_PLATFORM, DM_HWSKU, DM_BUF_CONV };
enum { PORT_SPEED, PORT_ROLE, PORT_DEVARGS, PORT_MTU, PORT_MAC, PORT_ADMIN, PORT_ALIAS };
enum { PQ_DSCP_TO_TC, PQ_TC_TO_PG, PQ_PFC_ENABLE, PQ_PFCWD_SW, PQ_PFC_PAUSE, PQ_TC_TO_QUEUE };
/* a policy's five fields have the same index in SWITCH_HASH and HASH_POLICY */
enum { HP_FIELDS, HP_ALGO, HP_SEED, HP_OFFSET, HP_UDF };
enum { SH_HASH_V4_RDMA = HP_UDF + 1, SH_HASH_V6_RDMA };
enum { UDF_BASE, UDF_OFFSET, UDF_LENGTH, UDF_MASK, UDF_MATCH };
enum { UM_IP_PROTOCOL, UM_L4_DST_PORT };
enum { NB_NEIGH, NB_FAMILY };
enum { NHG_NEXTHOP, NHG_POLICY, NHG_BUCKETS, NHG_RESILIENT, NHG_ARS };
enum { AP_ALGO, AP_SAMPLE, AP_SEED, AP_PAST_MIN, AP_PAST_MAX, AP_PAST_WEIGHT, AP_FUT_MIN,
       AP_FUT_MAX, AP_FUT_WEIGHT, AP_LOAD_PCT, AP_QUEUE_PCT, AP_V4, AP_V6 };
enum { AO_MODE, AO_IDLE, AO_MAXFLOWS, AO_DPORT };
enum { RT_NEXTHOP, RT_GROUP, RT_BLACKHOLE, RT_FALLBACK, RT_DISTANCE };
enum { BP_SIZE, BP_TYPE, BP_MODE, BP_XOFF };
enum { RD_EAL_ARGS, RD_CONTROL_SOCKET, RD_CONTROL_GROUP, RD_METRICS_PORT, RD_METRICS_ADDRESS,
       RD_METRICS_TIMEOUT, RD_DATAPLANE, RD_CONTROL_RO_GROUP, RD_USER };
enum { BPR_POOL, BPR_SIZE, BPR_DYN_TH, BPR_STATIC_TH, BPR_XOFF, BPR_XON, BPR_XON_OFFSET };
enum { BIND_PROFILE };
enum { SC_TYPE, SC_WEIGHT, SC_PRIORITY };
enum { WR_ECN, WR_GMIN, WR_GMAX, WR_GPROB, WR_MARK };
enum { Q_SCHEDULER, Q_WRED };
enum { WD_ACTION, WD_DETECT, WD_RESTORE, WD_POLL };
enum { CL_PRIORITY, CL_TC, CL_DSCP, CL_OPCODE, CL_QP, CL_LENGTH, CL_IN_PORT };
enum { MAP_ANY };

extern const struct rsw_table_schema rsw_schema_tables[]; /* ends with name == NULL */
extern const struct rsw_field_schema rsw_schema_udf[], rsw_schema_udf_match[];

const struct rsw_table_schema *rsw_schema_table(const char *name);
/* Index of field name in t, or -1. */
int rsw_schema_field(const struct rsw_field_schema *f, const char *name);
/* "expected ..." for a field, as the errors and the docs say it. */
void rsw_schema_expect(const struct rsw_field_schema *f, char *out, size_t len);
/* docs/config.md's table reference (the part between its schema markers). */
void rsw_schema_markdown(FILE *out);

#endif
