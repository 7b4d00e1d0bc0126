/* The forms `rocesw te` writes its routes in (docs/te.md, "Outputs"): a zone directory whose
 * switch configs carry them as POLICY_ROUTE, SONiC ACL redirect rules, EOS policy-based routing,
 * and the table writes a run applies (replay --te). */
#ifndef RSW_TE_WRITE_H
#define RSW_TE_WRITE_H

#include <stddef.h>

#include "te.h"
#include "dataplane/tables/table_write.h"

/* DIR/zone.yaml and DIR/<switch>.yaml (each switch's config with the routes added to its
 * POLICY_ROUTE), DIR/sonic/<switch>.json, DIR/eos/<switch>.cfg. Returns 0 or -1 with err. */
int rsw_te_write(const char *dir, const char *zone_path, const struct rsw_zone *z,
		 const struct rsw_te_result *res, char *err, size_t errlen);

/* The writes that take switch sw from the routes of `from` (or none) to those of `to`:
 * deletes of the routes `to` no longer has, then sets. origin labels them. Returns 0 or -1. */
int rsw_te_txn(const struct rsw_te_result *from, const struct rsw_te_result *to, unsigned sw,
	       const char *origin, struct rsw_txn *txn);

#endif
