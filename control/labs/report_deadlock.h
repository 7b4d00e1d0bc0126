/* The report's PFC deadlocks (report_deadlock.c). */
#ifndef RSW_REPORT_DEADLOCK_H
#define RSW_REPORT_DEADLOCK_H

#include <jansson.h>

/* The first deadlock of summary.json as the topology draws it: {"formed_us", "hops": [{"order",
 * "from", "to", "port", "peer", "priority"}]}, or NULL without one. */
json_t *rsw_report_deadlock_cycle(json_t *sum);
/* The "PFC deadlock" section: every deadlock's members in order, times and flows; NULL without. */
json_t *rsw_report_deadlock_section(json_t *sum);

#endif
