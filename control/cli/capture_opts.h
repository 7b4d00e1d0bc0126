/* The capture options of `rocesw replay` (--captures, --capture-*): which captures a run writes
 * and what goes into them. */
#ifndef RSW_CAPTURE_OPTS_H
#define RSW_CAPTURE_OPTS_H

#include <stdio.h>

#include "dataplane/replay/replay.h"

enum { RSW_OPT_CAPTURES = 1000, RSW_OPT_CAPTURE_ONLY, RSW_OPT_CAPTURE_WINDOW,
       RSW_OPT_CAPTURE_EVERY, RSW_OPT_CAPTURE_SNAPLEN, RSW_OPT_CAPTURE_FILTER };

/* getopt_long entries, to put in a command's option table */
#define RSW_CAPTURE_OPTIONS                                                                   \
	{"captures", required_argument, NULL, RSW_OPT_CAPTURES},                              \
	{"capture-only", required_argument, NULL, RSW_OPT_CAPTURE_ONLY},                      \
	{"capture-window", required_argument, NULL, RSW_OPT_CAPTURE_WINDOW},                  \
	{"capture-every", required_argument, NULL, RSW_OPT_CAPTURE_EVERY},                    \
	{"capture-snaplen", required_argument, NULL, RSW_OPT_CAPTURE_SNAPLEN},                \
	{"capture-filter", required_argument, NULL, RSW_OPT_CAPTURE_FILTER}

#define RSW_CAPTURE_USAGE                                                                     \
	"  --captures all|none  write the captures of every port and host (default), or none\n"  \
	"                   (summary, events and report are written either way)\n"            \
	"  --capture-only PATTERN  only the captures whose name matches (fnmatch: a host,\n"    \
	"                   a port of a single switch, SWITCH|PORT in a zone); repeatable\n"      \
	"  --capture-window FROM:TO  only frames departing in [FROM, TO) ns (TO may be empty)\n" \
	"  --capture-every N  keep 1 frame in N of each capture (deterministic)\n"              \
	"  --capture-snaplen N  keep the first N bytes of each frame (as tcpdump -s; 0: whole\n" \
	"                   frames; default whole, 128 with --collective, whose payload is\n"   \
	"                   generated)\n"                                                      \
	"  --capture-filter EXPR  only frames matching a pcap-filter(7) expression\n"

/* Takes option `opt` with its argument into c. 1: taken; 0: not a capture option; -1: a bad
 * value (said on stderr). */
int rsw_capture_opt(int opt, const char *arg, struct rsw_replay_capture *c);

/* "captures: N files, X MB in DIR" (or that none were written). */
void rsw_capture_print(FILE *f, const struct rsw_replay_capture *c, const char *dir);

#endif
