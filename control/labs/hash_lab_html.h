/* The hash lab's pages (control/labs/html.h: one self-contained file, charts by the inlined uPlot). */
#ifndef RSW_HASH_LAB_HTML_H
#define RSW_HASH_LAB_HTML_H

#include <jansson.h>

/* One group: doc is the --json document (traffic, members, policies[] with members[], max_mean,
 * jain, fat figures, seed_sweep and fail when asked). Every policy's bar chart shares one y
 * scale. Returns -1 if path cannot be written. */
int rsw_lab_write_html(const char *path, const json_t *doc);

/* Sets the same y maximum on every bars block of blocks (recursively): the largest bar + 5 %. */
void rsw_lab_share_y(json_t *blocks);

#endif
