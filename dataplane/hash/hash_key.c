/* Builds the byte string a hash policy feeds to its algorithm: native fields in the fixed order
 * of enum rsw_hash_field, each in network byte order, then the UDFs in configured order. */
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>

#include "hash_algo.h"
#include "hash_policy.h"

static const char *const field_names[RSW_HF_COUNT] = {
	"SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT", "IN_PORT",
	"IPV6_FLOW_LABEL", "RDMA_BTH_OPCODE", "RDMA_BTH_DEST_QP",
};

const char *rsw_hash_field_name(unsigned f)
{
	return f < RSW_HF_COUNT ? field_names[f] : "?";
}

unsigned rsw_hash_field_from_name(const char *name)
{
	for (unsigned i = 0; i < RSW_HF_COUNT; i++)
		if (strcmp(field_names[i], name) == 0)
			return i;
	return RSW_HF_COUNT;
}

static const char *const base_names[3] = {"L2", "L3", "L4"};

const char *rsw_udf_base_name(unsigned b)
{
	return b < 3 ? base_names[b] : "?";
}

unsigned rsw_udf_base_from_name(const char *name)
{
	for (unsigned i = 0; i < 3; i++)
		if (strcmp(base_names[i], name) == 0)
			return i;
	return 3;
}

static inline uint8_t *put16(uint8_t *k, uint16_t v)
{
	k[0] = (uint8_t)(v >> 8);
	k[1] = (uint8_t)v;
	return k + 2;
}

static inline uint8_t *put24(uint8_t *k, uint32_t v)
{
	k[0] = (uint8_t)(v >> 16);
	k[1] = (uint8_t)(v >> 8);
	k[2] = (uint8_t)v;
	return k + 3;
}

static uint8_t *put_udf(uint8_t *k, const struct rsw_udf *u, const uint8_t *frame,
			const struct rsw_pkt_meta *m)
{
	int ok = 1;
	uint32_t base = 0;

	if (u->match_ip_protocol >= 0 && (m->l3 == RSW_L3_NONE || m->ip_proto != u->match_ip_protocol))
		ok = 0;
	if (u->match_l4_dst_port >= 0 &&
	    (!(m->flags & (RSW_META_F_UDP | RSW_META_F_TCP)) || m->dport != u->match_l4_dst_port))
		ok = 0;
	switch (u->base) {
	case RSW_UDF_L2:
		base = 0;
		break;
	case RSW_UDF_L3:
		ok = ok && m->l3 != RSW_L3_NONE;
		base = m->l3_off;
		break;
	default:
		ok = ok && m->l3 != RSW_L3_NONE && !(m->flags & RSW_META_F_FRAG_LATER);
		base = m->l4_off;
		break;
	}
	if (ok && base + u->offset + u->length <= m->frame_len) {
		const uint8_t *src = frame + base + u->offset;
		for (unsigned i = 0; i < u->length; i++)
			k[i] = src[i] & u->mask[i];
	} else {
		memset(k, 0, u->length);
	}
	return k + u->length;
}

unsigned rsw_hash_field_len(unsigned field, unsigned l3)
{
	static const uint8_t len[RSW_HF_COUNT] = {
		[RSW_HF_IP_PROTOCOL] = 1, [RSW_HF_L4_SRC_PORT] = 2, [RSW_HF_L4_DST_PORT] = 2,
		[RSW_HF_IN_PORT] = 2, [RSW_HF_IPV6_FLOW_LABEL] = 3, [RSW_HF_RDMA_BTH_OPCODE] = 1,
		[RSW_HF_RDMA_BTH_DEST_QP] = 3,
	};
	if (field == RSW_HF_SRC_IP || field == RSW_HF_DST_IP)
		return l3 == RSW_L3_IPV6 ? 16 : 4;
	return field < RSW_HF_COUNT ? len[field] : 0;
}

/* Native fields one by one, in the order of enum rsw_hash_field. */
static inline __attribute__((always_inline)) uint8_t *
put_fields(uint16_t f, const struct rsw_pkt_meta *m, uint8_t *k, unsigned iplen)
{
	int has_l4 = (m->flags & (RSW_META_F_UDP | RSW_META_F_TCP)) != 0;
	int roce = (m->flags & RSW_META_F_ROCE) != 0;

	if (f & (1u << RSW_HF_SRC_IP)) {
		memcpy(k, m->src_ip, iplen);
		k += iplen;
	}
	if (f & (1u << RSW_HF_DST_IP)) {
		memcpy(k, m->dst_ip, iplen);
		k += iplen;
	}
	if (f & (1u << RSW_HF_IP_PROTOCOL))
		*k++ = m->ip_proto;
	if (f & (1u << RSW_HF_L4_SRC_PORT))
		k = put16(k, has_l4 ? m->sport : 0);
	if (f & (1u << RSW_HF_L4_DST_PORT))
		k = put16(k, has_l4 ? m->dport : 0);
	if (f & (1u << RSW_HF_IN_PORT))
		k = put16(k, m->in_port);
	if (f & (1u << RSW_HF_IPV6_FLOW_LABEL))
		k = put24(k, m->l3 == RSW_L3_IPV6 ? m->flow_label : 0);
	if (f & (1u << RSW_HF_RDMA_BTH_OPCODE))
		*k++ = roce ? m->bth_opcode : 0;
	if (f & (1u << RSW_HF_RDMA_BTH_DEST_QP))
		k = put24(k, roce ? m->bth_dest_qp : 0);
	return k;
}

/* The key of one L3 kind: iplen is a constant at each call below, so the address copies are
 * fixed-size moves instead of calls to memcpy. */
static inline __attribute__((always_inline)) size_t
build_key(const struct rsw_hash_policy *pol, const uint8_t *frame, const struct rsw_pkt_meta *m,
	  uint8_t *key, unsigned iplen)
{
	uint8_t *k = key;
	uint16_t f = pol->fields;

	/* The usual policy, the 5-tuple (UDFs may follow): one run of stores instead of a test
	 * per field, the same bytes as put_fields. */
	if (f == RSW_HASH_FIVE_TUPLE) {
		uint32_t ports = 0;
		if (m->flags & (RSW_META_F_UDP | RSW_META_F_TCP))
			ports = rte_cpu_to_be_32((uint32_t)m->sport << 16 | m->dport);
		memcpy(k, m->src_ip, iplen);
		memcpy(k + iplen, m->dst_ip, iplen);
		k[2 * iplen] = m->ip_proto;
		memcpy(k + 2 * iplen + 1, &ports, 4);
		k += 2 * iplen + 5;
	} else {
		k = put_fields(f, m, k, iplen);
	}
	for (unsigned i = 0; i < pol->n_udf; i++)
		k = put_udf(k, &pol->udf[i], frame, m);
	return (size_t)(k - key);
}

size_t rsw_hash_key(const struct rsw_hash_policy *pol, const uint8_t *frame,
		    const struct rsw_pkt_meta *m, uint8_t key[RSW_HASH_KEY_MAX])
{
	return m->l3 == RSW_L3_IPV6 ? build_key(pol, frame, m, key, 16)
				    : build_key(pol, frame, m, key, 4);
}

uint32_t rsw_hash_packet(const struct rsw_hash_policy *pol, const uint8_t *frame,
			 const struct rsw_pkt_meta *m, uint64_t *rnd)
{
	uint8_t key[RSW_HASH_KEY_MAX];
	size_t n = rsw_hash_key(pol, frame, m, key);
	return rsw_hash_compute(pol->algo, pol->seed, key, n, rnd) >> pol->offset;
}

unsigned rsw_hash_key_parts(const struct rsw_hash_policy *p, unsigned l3, const char *name[],
			    unsigned len[], char udf_names[][RSW_UDF_LABEL_MAX])
{
	unsigned n = 0;
	for (unsigned f = 0; f < RSW_HF_COUNT; f++) {
		if (!(p->fields & (1u << f)))
			continue;
		name[n] = rsw_hash_field_name(f);
		len[n++] = rsw_hash_field_len(f, l3);
	}
	for (unsigned u = 0; u < p->n_udf; u++) {
		snprintf(udf_names[u], RSW_UDF_LABEL_MAX, "UDF%u (%s+%u, %u bytes)", u,
			 rsw_udf_base_name(p->udf[u].base), p->udf[u].offset, p->udf[u].length);
		name[n] = udf_names[u];
		len[n++] = p->udf[u].length;
	}
	return n;
}
