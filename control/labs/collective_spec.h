/* `--collective SPEC` of rocesw replay: a compact PATTERN[,KEY=VALUE...] string or a YAML file. */
#ifndef RSW_COLLECTIVE_SPEC_H
#define RSW_COLLECTIVE_SPEC_H

#include <stddef.h>

#include "dataplane/replay/collective.h"
#include "dataplane/config/zone.h"

/* Fills c from spec, host names resolved in z. Returns 0, or -1 with the reason in err. */
int rsw_coll_spec_parse(const char *spec, const struct rsw_zone *z, struct rsw_coll *c,
			char *err, size_t errlen);

#endif
