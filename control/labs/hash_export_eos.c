#include <string.h>

#include "dataplane/hash/hash_algo.h"
#include "dataplane/hash/hash_policy.h"
#include "hash_export_eos.h"

#define UDP_HEADER 8
#define EOS_MAX_PAYLOAD_BYTE 62

/* "5-7,9": the set bytes of sel as ranges, as EOS lists them. */
static void byte_list(const uint8_t *sel, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned b = 0; b <= EOS_MAX_PAYLOAD_BYTE; b++) {
		if (!sel[b] || (b > 0 && sel[b - 1]))
			continue;
		unsigned e = b;
		while (e + 1 <= EOS_MAX_PAYLOAD_BYTE && sel[e + 1])
			e++;
		int w = e > b ? snprintf(buf + used, n - used, "%s%u-%u", used ? "," : "", b, e)
			      : snprintf(buf + used, n - used, "%s%u", used ? "," : "", b);
		if (w > 0 && (size_t)w < n - used)
			used += (size_t)w;
	}
}

int rsw_export_eos(const struct rsw_named_policy *np, const char *profile, FILE *out, char *why,
		   size_t len)
{
	const struct rsw_hash_policy *p = &np->pol;
	uint8_t sel[EOS_MAX_PAYLOAD_BYTE + 1] = {0};
	int port = -1;
	if (!p->n_udf) {
		snprintf(why, len, "it has no UDF: nothing for `fields udp` to carry");
		return -1;
	}
	for (unsigned i = 0; i < p->n_udf; i++) {
		const struct rsw_udf *u = &p->udf[i];
		if (u->base != RSW_UDF_L4 || u->match_ip_protocol != 17 || u->match_l4_dst_port < 0) {
			snprintf(why, len, "UDF%u is not on the UDP payload of one destination port (EOS "
				 "hashes `fields udp dst-port P` payload bytes: base L4 with match "
				 "ip_protocol 17 and l4_dst_port)", i);
			return -1;
		}
		if (port >= 0 && u->match_l4_dst_port != port) {
			snprintf(why, len, "UDF%u matches UDP port %d, UDF0 port %d: a profile has one "
				 "`fields udp dst-port`", i, u->match_l4_dst_port, port);
			return -1;
		}
		port = u->match_l4_dst_port;
		if (u->offset < UDP_HEADER || u->offset + u->length - UDP_HEADER - 1 > EOS_MAX_PAYLOAD_BYTE) {
			snprintf(why, len, "UDF%u (L4+%u, %u bytes) is outside UDP payload bytes 0-%u",
				 i, u->offset, u->length, EOS_MAX_PAYLOAD_BYTE);
			return -1;
		}
		for (unsigned k = 0; k < u->length; k++) {
			if (u->mask[k] != 0 && u->mask[k] != 0xFF) {
				snprintf(why, len, "UDF%u masks byte %u with 0x%02x: EOS hashes whole "
					 "payload bytes", i, k, u->mask[k]);
				return -1;
			}
			if (u->mask[k])
				sel[u->offset - UDP_HEADER + k] = 1;
		}
	}
	char bytes[256];
	byte_list(sel, bytes, sizeof(bytes));
	fprintf(out, "! rocesw hash export --format eos: policy %s\n", np->name);
	fprintf(out, "! UDF fields as an Arista SAND load-balance profile (EOS 4.33.1F or later).\n");
	fprintf(out, "! The profile does not set the algorithm (%s in the lab), the seed (%u) or\n",
		rsw_hash_algo_name(p->algo), p->seed);
	fprintf(out, "! the header fields (");
	int first = 1;
	for (unsigned f = 0; f < RSW_HF_COUNT; f++)
		if (p->fields >> f & 1) {
			fprintf(out, "%s%s", first ? "" : " ", rsw_hash_field_name(f));
			first = 0;
		}
	fprintf(out, "%s).\n! The switch's own settings apply to those.\n", first ? "none" : "");
	fprintf(out, "load-balance policies\n");
	fprintf(out, "   load-balance sand profile %s\n", profile);
	fprintf(out, "      fields udp dst-port %d\n", port);
	fprintf(out, "         payload bytes %s\n", bytes);
	return 0;
}
