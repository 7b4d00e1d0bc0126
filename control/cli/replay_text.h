/* What `rocesw replay` prints on stdout: every port and host (one switch, a zone of up to
 * RSW_DIGEST_SCALE_SWITCHES switches, or --ports all), else the zone in aggregate: totals, the
 * collective, the hottest link directions and deepest queues (top N), and the distribution of
 * link utilization per tier. Every detail stays in summary.json. */
#ifndef RSW_REPLAY_TEXT_H
#define RSW_REPLAY_TEXT_H

#include <stdio.h>

#include <jansson.h>

#include "replay_summary.h"

enum { RSW_PORTS_AUTO = 0, RSW_PORTS_ALL, RSW_PORTS_TOP };

struct rsw_text_opts {
	int ports;    /* RSW_PORTS_* */
	unsigned top; /* rows of the top-N tables; 0: the default, 10 */
};

enum { RSW_OPT_TOP = 1100, RSW_OPT_PORTS };

/* getopt_long entries, to put in a command's option table */
#define RSW_TEXT_OPTIONS                                                                      \
	{"top", required_argument, NULL, RSW_OPT_TOP},                                        \
	{"ports", required_argument, NULL, RSW_OPT_PORTS}

#define RSW_TEXT_USAGE                                                                        \
	"  --ports all|top  the summary on stdout: every port and host (the default for one\n" \
	"                   switch and zones of up to 8 switches), or the zone in aggregate\n"   \
	"                   (totals, top-N links and queues, utilization per tier; the\n"        \
	"                   default above 8 switches); summary.json has every port either way\n" \
	"  --top N          rows of the top-N tables (default 10)\n"

/* Takes option `opt` with its argument into o. 1: taken; 0: not one of these; -1: a bad value
 * (said on stderr). */
int rsw_text_opt(int opt, const char *arg, struct rsw_text_opts *o);

/* The summary of a run on f, as o asks. */
void rsw_replay_text_print(FILE *f, const struct rsw_zone *z, int zone,
			   const struct rsw_replay_result *r, const struct rsw_coll *coll,
			   const struct rsw_text_opts *o);

/* The aggregate view of a run's summary.json on f, with top rows per table. */
void rsw_replay_text_digest(FILE *f, const json_t *sum, unsigned top);

#endif
