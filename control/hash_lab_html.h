/* Self-contained HTML report of the hash lab (no network needed to view it). */
#ifndef RSW_HASH_LAB_HTML_H
#define RSW_HASH_LAB_HTML_H

#include "hash_lab.h"

/* Writes the page to path; -1 if it cannot be written. */
int rsw_lab_write_html(const char *path, const char *const *names, const struct rsw_lab_result *res,
		       unsigned n_pol, const struct rsw_lab_traffic *t);

#endif
