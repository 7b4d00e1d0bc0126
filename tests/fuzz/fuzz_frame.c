#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/hash/hash_algo.h"
#include "dataplane/hash/hash_policy.h"
#include "dataplane/pkt/icrc.h"
#include "dataplane/pkt/parse.h"
#include "dataplane/pkt/rewrite.h"
#include "fuzz_targets.h"

static struct rsw_hash_policy policy(unsigned algo, uint16_t fields, int udf_qp)
{
	struct rsw_hash_policy p;
	memset(&p, 0, sizeof(p));
	p.algo = (uint8_t)algo;
	p.fields = fields;
	if (udf_qp) {
		p.n_udf = 2;
		p.udf[0] = (struct rsw_udf){.base = RSW_UDF_L4, .offset = 13, .length = 3,
					    .match_ip_protocol = 17, .match_l4_dst_port = 4791};
		memset(p.udf[0].mask, 0xFF, 3);
		/* a UDF reaching past any real header: must read only what is there */
		p.udf[1] = (struct rsw_udf){.base = RSW_UDF_L3, .offset = 60, .length = RSW_UDF_MAX_LEN,
					    .match_ip_protocol = -1, .match_l4_dst_port = -1};
		memset(p.udf[1].mask, 0xFF, RSW_UDF_MAX_LEN);
	}
	return p;
}

int rsw_fuzz_frame(const uint8_t *data, size_t size)
{
	if (size > 65535)
		return 0;
	/* an exact-size heap copy: a read one byte past the frame is an ASan error */
	uint8_t *f = malloc(size ? size : 1);
	if (!f)
		return 0;
	memcpy(f, data, size);
	struct rsw_pkt_meta m, full;
	/* the RoCE fast path, where it takes a frame, reads it exactly as the full parser */
	int fast = rsw_parse_fast(f, (uint32_t)size, &m);
	if (fast &&
	    (rsw_parse_full(f, (uint32_t)size, &full) != 0 || memcmp(&m, &full, sizeof(m)))) {
		fprintf(stderr, "fuzz_frame: the fast path and the full parser disagree on a "
				"frame of %zu bytes\n", size);
		abort();
	}
	if (rsw_parse(f, (uint32_t)size, &m) == 0 && m.l2_kind == RSW_L2_DATA) {
		uint64_t rnd = 1;
		const uint16_t all = (uint16_t)((1u << RSW_HF_COUNT) - 1);
		struct rsw_hash_policy p[] = {
			policy(RSW_HASH_CRC, all, 1), policy(RSW_HASH_CRC_CCITT, 0, 1),
			policy(RSW_HASH_CRC_32LO, all, 0), policy(RSW_HASH_JENKINS_HI, all, 1),
			policy(RSW_HASH_XOR, all, 0),
		};
		for (unsigned i = 0; i < sizeof(p) / sizeof(p[0]); i++)
			(void)rsw_hash_packet(&p[i], f, &m, &rnd);
		if (m.flags & RSW_META_F_ROCE)
			(void)rsw_icrc_check(f, &m);
		if (m.l3 != RSW_L3_NONE) {
			rsw_rewrite_ecn_ce(f, &m);
			rsw_rewrite_ttl(f, &m);
		}
	}
	free(f);
	return fast;
}
