/* `rocesw hash export`: a lab policy as the configuration of a real switch. SONiC: the
 * SWITCH_HASH|GLOBAL fields of the generic-hash design (sonic-net/SONiC doc/hash/hash-design.md):
 * ecmp_hash (native field list) and ecmp_hash_algorithm. What the target cannot express is refused
 * with the reason. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "dataplane/config/config.h"
#include "dataplane/hash/hash_algo.h"
#include "dataplane/hash/hash_policy.h"
#include "control/labs/ars_export.h"
#include "hash_export_eos.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rocesw hash export --format sonic|eos --policy F [--name P] [--profile N]\n"
		"\n"
		"Writes policy P of F (the only one if F has one) as switch configuration.\n"
		"\n"
		"sonic: a config_db.json fragment, SWITCH_HASH|GLOBAL ecmp_hash and\n"
		"ecmp_hash_algorithm. A UDF that is exactly the RoCE BTH destination QP (UDP/4791, L4\n"
		"offset 13, 3 bytes, full mask) or opcode (offset 8, 1 byte) becomes the native field\n"
		"RDMA_BTH_DEST_QP or RDMA_BTH_OPCODE; any other UDF, a seed, an offset or an algorithm\n"
		"SONiC does not name is refused with the reason.\n"
		"\n"
		"eos: the UDF fields as an Arista `load-balance policies` SAND profile (Jericho):\n"
		"`fields udp dst-port P` and `payload bytes LIST` (UDP payload bytes 0-62), in the\n"
		"syntax of Arista's AVD eos_cli_config_gen. A UDF off the UDP payload of one\n"
		"destination port, beyond byte 62 or with a partial byte mask is refused with the\n"
		"reason; the algorithm, seed and header fields, which the profile does not set, are\n"
		"named in its comment lines. --profile N names the profile (default: the policy's\n"
		"name; `default` changes the profile the switch uses unless told otherwise).\n"
		"\n"
		"When F is a switch config whose NEXTHOP_GROUPs name an ARS_OBJECT, its ARS settings\n"
		"follow (--no-ars: not): sonic adds ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES and\n"
		"ARS_NEXTHOPS (SONiC's sonic-ars tables); a mode or value SONiC cannot hold is\n"
		"refused with the reason, and the settings it has no field for are named on stderr.\n"
		"eos adds them as comment lines: EOS's DLB commands are not written (docs/ars.md).\n");
}

/* The native field a UDF is equivalent to, or -1. */
static int udf_as_native(const struct rsw_udf *u)
{
	if (u->base != RSW_UDF_L4 || u->match_ip_protocol != 17 || u->match_l4_dst_port != 4791)
		return -1;
	for (unsigned i = 0; i < u->length; i++)
		if (u->mask[i] != 0xFF)
			return -1;
	if (u->offset == 13 && u->length == 3)
		return RSW_HF_RDMA_BTH_DEST_QP;
	if (u->offset == 8 && u->length == 1)
		return RSW_HF_RDMA_BTH_OPCODE;
	return -1;
}

/* Fills fields (SONiC names, SONiC's order of our key) or returns -1 with the reason. */
static int to_sonic(const struct rsw_named_policy *np, json_t **out, char *why, size_t len)
{
	const struct rsw_hash_policy *p = &np->pol;
	uint16_t fields = p->fields;
	if (p->algo == RSW_HASH_JENKINS_LO || p->algo == RSW_HASH_JENKINS_HI) {
		snprintf(why, len, "SONiC's ecmp_hash_algorithm has no %s (it names CRC, XOR, RANDOM, "
			 "CRC_32LO, CRC_32HI, CRC_CCITT, CRC_XOR)", rsw_hash_algo_name(p->algo));
		return -1;
	}
	if (p->seed) {
		snprintf(why, len, "SWITCH_HASH|GLOBAL has no seed field (seed %u)", p->seed);
		return -1;
	}
	if (p->offset) {
		snprintf(why, len, "SWITCH_HASH|GLOBAL has no offset field (offset %u)", p->offset);
		return -1;
	}
	for (unsigned i = 0; i < p->n_udf; i++) {
		int f = udf_as_native(&p->udf[i]);
		/* a native field goes before the UDFs in the key: only the last UDFs can become one */
		if (f < 0 || (fields >> f & 1)) {
			snprintf(why, len, "UDF%u (%s+%u, %u bytes) has no SONiC native field; SONiC's "
				 "SWITCH_HASH has no UDF", i, rsw_udf_base_name(p->udf[i].base),
				 p->udf[i].offset, p->udf[i].length);
			return -1;
		}
		for (unsigned g = (unsigned)f + 1; g < RSW_HF_COUNT; g++)
			if (fields >> g & 1) {
				snprintf(why, len, "UDF%u would become %s, which hashes before %s: the "
					 "key would change order", i, rsw_hash_field_name((unsigned)f),
					 rsw_hash_field_name(g));
				return -1;
			}
		fields |= (uint16_t)(1u << f);
		fprintf(stderr, "rocesw hash export: %s: UDF%u is the %s: exported as that native "
			"field (the same key bytes)\n", np->name, i, rsw_hash_field_name((unsigned)f));
	}
	json_t *list = json_array();
	for (unsigned f = 0; f < RSW_HF_COUNT; f++)
		if (fields >> f & 1)
			json_array_append_new(list, json_string(rsw_hash_field_name(f)));
	json_t *global = json_object(), *table = json_object();
	json_object_set_new(global, "ecmp_hash", list);
	json_object_set_new(global, "ecmp_hash_algorithm", json_string(rsw_hash_algo_name(p->algo)));
	json_object_set_new(table, "GLOBAL", global);
	*out = json_object();
	json_object_set_new(*out, "SWITCH_HASH", table);
	return 0;
}

static int export_eos(const struct rsw_named_policy *np, const char *profile,
		      const struct rsw_txn *ars)
{
	char why[256];
	if (rsw_export_eos(np, profile ? profile : np->name, stdout, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocesw hash export: %s cannot be expressed for EOS: %s\n", np->name,
			why);
		return 1;
	}
	if (ars)
		rsw_ars_export_eos(ars, stdout);
	return 0;
}

static int export_sonic(const struct rsw_named_policy *np, const struct rsw_txn *ars)
{
	char why[256];
	json_t *out;
	if (to_sonic(np, &out, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocesw hash export: %s cannot be expressed for SONiC: %s\n", np->name,
			why);
		return 1;
	}
	if (ars && rsw_ars_export_sonic(ars, out, why, sizeof(why)) < 0) {
		fprintf(stderr, "rocesw hash export: the ARS settings cannot be expressed for SONiC: "
			"%s (--no-ars exports the hash policy alone)\n", why);
		json_decref(out);
		return 1;
	}
	json_dumpf(out, stdout, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
	printf("\n");
	json_decref(out);
	return 0;
}

int rsw_cmd_hash_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'}, {"policy", required_argument, NULL, 'p'},
		{"name", required_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'},
		{"profile", required_argument, NULL, 'P'}, {"no-ars", no_argument, NULL, 'A'},
		{NULL, 0, NULL, 0},
	};
	const char *format = NULL, *file = NULL, *name = NULL, *profile = NULL;
	int c, no_ars = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'p': file = optarg; break;
		case 'n': name = optarg; break;
		case 'P': profile = optarg; break;
		case 'A': no_ars = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!format || !file || optind < argc) {
		usage(stderr);
		return 2;
	}
	int eos = !strcmp(format, "eos");
	if (strcmp(format, "sonic") && !eos) {
		fprintf(stderr, "rocesw hash export: format '%s' is not supported (sonic, eos)\n",
			format);
		return 2;
	}
	if (profile && (!eos || !*profile || strpbrk(profile, " \t\n"))) {
		fprintf(stderr, "rocesw hash export: --profile takes one word and applies to --format "
			"eos\n");
		return 2;
	}
	char err[1024];
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn || rsw_config_hash_policies(file, txn, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", txn ? err : "out of memory");
		rsw_txn_free(txn);
		return 1;
	}
	const struct rsw_named_policy *np = NULL;
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		const struct rsw_named_policy *p = &rsw_txn_at(txn, i)->u.policy;
		if (name ? !strcmp(p->name, name) : rsw_txn_len(txn) == 1)
			np = p;
	}
	if (!np) {
		fprintf(stderr, "rocesw hash export: %s: %s; policies:", file,
			name ? "no such policy" : "several policies, choose one with --name");
		for (size_t i = 0; i < rsw_txn_len(txn); i++)
			fprintf(stderr, " %s", rsw_txn_at(txn, i)->u.policy.name);
		fprintf(stderr, "\n");
		rsw_txn_free(txn);
		return 1;
	}
	struct rsw_txn *ars = NULL;
	if (!no_ars && rsw_ars_export_load(file, &ars, err, sizeof(err)) < 0) {
		fprintf(stderr, "rocesw hash export: %s: %s\n", file, err);
		rsw_txn_free(txn);
		return 1;
	}
	int rc = eos ? export_eos(np, profile, ars) : export_sonic(np, ars);
	rsw_txn_free(ars);
	rsw_txn_free(txn);
	return rc;
}
