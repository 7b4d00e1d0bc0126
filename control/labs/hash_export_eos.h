/* A hash policy's UDF fields as Arista EOS configuration: a SAND (Jericho) load-balance profile
 * hashing UDP payload bytes for one UDP destination port, in the syntax of Arista's AVD
 * eos_cli_config_gen (load_balance.policies.sand_profiles[].fields.udp: `fields udp dst-port P`,
 * `payload bytes LIST`, bytes 0..62 of the UDP payload; EOS 4.33.1F or later). */
#ifndef RSW_HASH_EXPORT_EOS_H
#define RSW_HASH_EXPORT_EOS_H

#include <stddef.h>
#include <stdio.h>

#include "dataplane/tables/table_types.h"

/* Writes the configuration of np as profile `profile` to out, or returns -1 with why the profile
 * cannot express the policy's UDF fields. */
int rsw_export_eos(const struct rsw_named_policy *np, const char *profile, FILE *out, char *why,
		   size_t len);

#endif
