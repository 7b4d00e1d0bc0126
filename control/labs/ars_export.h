/* A switch config's ARS settings (ARS_PROFILE, ARS_OBJECT, the NEXTHOP_GROUPs that name an
 * object) as the configuration of SONiC and EOS switches, beside `rocesw hash export`'s hash
 * policy (docs/ars.md "Export"). What a target has no field for is said, never guessed. */
#ifndef RSW_ARS_EXPORT_H
#define RSW_ARS_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

struct rsw_txn;

/* Compiles path as a switch config into *txn (NULL and 0 when the file is not one, e.g. a
 * policy file: then it has no ARS). Returns 1 when some group uses ARS, 0 when none, -1 when
 * the file is a switch config that does not compile (err says why). */
int rsw_ars_export_load(const char *path, struct rsw_txn **txn, char *err, size_t errlen);

/* Adds SONiC's ARS tables (sonic-ars: ARS_PROFILE, ARS_OBJECT, ARS_INTERFACES, ARS_NEXTHOPS) to
 * db, notes on stderr the settings SONiC has no field for; -1 with why when a setting cannot be
 * expressed (a mode or value outside the YANG model). */
int rsw_ars_export_sonic(const struct rsw_txn *txn, json_t *db, char *why, size_t len);

/* The ARS settings as `!` comment lines of an EOS configuration (no DLB commands: see
 * docs/ars.md "Export"). */
void rsw_ars_export_eos(const struct rsw_txn *txn, FILE *out);

#endif
