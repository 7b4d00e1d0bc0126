#ifndef RSW_PROM_METRICS_H
#define RSW_PROM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* What roceswd itself counts. */
struct rsw_prom_daemon {
	uint64_t restarts, reloads_ok, reloads_failed;
	uint64_t generation;       /* of the last config the dataplane reported applied */
	json_t *switch_generation; /* a zone: {SWITCH: generation}, else NULL */
	int reload_in_progress;
	uint64_t http_cut;         /* metrics connections cut at their deadline */
};

/* The metrics page: counters (a `show counters` result, or NULL when the dataplane does not
 * answer) and, if d, the daemon's own. Returns a malloc'd text of *len bytes, NULL if out of
 * memory. */
char *rsw_prom_render(json_t *counters, const struct rsw_prom_daemon *d, size_t *len);

#endif
