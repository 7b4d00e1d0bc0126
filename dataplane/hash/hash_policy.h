/* A hash policy: which native fields and UDF bytes feed the hash, and how they are hashed.
 * Field names are SAI's native hash fields without the SAI_NATIVE_HASH_FIELD_ prefix. */
#ifndef RSW_HASH_POLICY_H
#define RSW_HASH_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "../pkt/pkt_meta.h"

/* Native fields in the order they are fed to the hash (docs/hash.md). */
enum rsw_hash_field {
	RSW_HF_SRC_IP = 0,        /* 4 or 16 bytes */
	RSW_HF_DST_IP,            /* 4 or 16 bytes */
	RSW_HF_IP_PROTOCOL,       /* 1 byte */
	RSW_HF_L4_SRC_PORT,       /* 2 bytes */
	RSW_HF_L4_DST_PORT,       /* 2 bytes */
	RSW_HF_IN_PORT,           /* 2 bytes, the ingress port index */
	RSW_HF_IPV6_FLOW_LABEL,   /* 3 bytes, 20 bits right-aligned; zero for IPv4 */
	RSW_HF_RDMA_BTH_OPCODE,   /* 1 byte; zero if not RoCE */
	RSW_HF_RDMA_BTH_DEST_QP,  /* 3 bytes; zero if not RoCE */
	RSW_HF_COUNT
};

#define RSW_HASH_FIVE_TUPLE                                                                   \
	(1u << RSW_HF_SRC_IP | 1u << RSW_HF_DST_IP | 1u << RSW_HF_IP_PROTOCOL |               \
	 1u << RSW_HF_L4_SRC_PORT | 1u << RSW_HF_L4_DST_PORT)

enum rsw_udf_base { RSW_UDF_L2 = 0, RSW_UDF_L3, RSW_UDF_L4 };

#define RSW_UDF_MAX 8
#define RSW_UDF_MAX_LEN 8
#define RSW_UDF_OFFSET_MAX 255 /* bytes from its base (the config's bound) */
#define RSW_HASH_KEY_MAX (16 + 16 + 1 + 2 + 2 + 2 + 3 + 1 + 3 + RSW_UDF_MAX * RSW_UDF_MAX_LEN)

/* User-defined field: length bytes at offset from the start of the base header, ANDed with mask,
 * fed only when the match holds; otherwise (or when the bytes lie past the frame) zeros. */
struct rsw_udf {
	uint8_t base;        /* enum rsw_udf_base */
	uint8_t length;      /* 1..RSW_UDF_MAX_LEN */
	uint16_t offset;
	uint8_t mask[RSW_UDF_MAX_LEN];
	int32_t match_ip_protocol;  /* -1 = any */
	int32_t match_l4_dst_port;  /* -1 = any */
};

struct rsw_hash_policy {
	uint8_t algo;        /* enum rsw_hash_algo */
	uint8_t n_udf;
	uint16_t fields;     /* bit i = enum rsw_hash_field i */
	uint32_t seed;
	/* The 16-bit hash value is shifted right by offset before bucket selection (SAI's hash offset). */
	uint8_t offset;
	struct rsw_udf udf[RSW_UDF_MAX];
};

const char *rsw_hash_field_name(unsigned field);
unsigned rsw_hash_field_from_name(const char *name); /* RSW_HF_COUNT if unknown */
const char *rsw_udf_base_name(unsigned base);
unsigned rsw_udf_base_from_name(const char *name); /* 3 if unknown */

/* Bytes a native field takes in the key of a packet whose L3 is l3 (enum rsw_l3). */
unsigned rsw_hash_field_len(unsigned field, unsigned l3);

/* The bytes the policy feeds to the hash for this packet, in order. Returns the key length. */
size_t rsw_hash_key(const struct rsw_hash_policy *pol, const uint8_t *frame,
		    const struct rsw_pkt_meta *m, uint8_t key[RSW_HASH_KEY_MAX]);

#define RSW_UDF_LABEL_MAX 48
/* The labels and lengths of a key's parts, in the order rsw_hash_key writes them: native field
 * names, then "UDFn (BASE+off, n bytes)" written into udf_names. Returns the number of parts. */
unsigned rsw_hash_key_parts(const struct rsw_hash_policy *p, unsigned l3, const char *name[],
			    unsigned len[], char udf_names[][RSW_UDF_LABEL_MAX]);

/* Hash of a packet under a policy, after the offset shift. */
uint32_t rsw_hash_packet(const struct rsw_hash_policy *pol, const uint8_t *frame,
			 const struct rsw_pkt_meta *m, uint64_t *rnd);

#endif
