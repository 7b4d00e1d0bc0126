/* The self-contained HTML pages the tools write: one file, nothing fetched when viewed. Charts are
 * drawn by uPlot (MIT, from npm: control/labs/report/package.json), inlined with the page's own
 * script (control/labs/report/rsw_page.js) that reads a JSON document of blocks the C code builds. */
#ifndef RSW_HTML_H
#define RSW_HTML_H

#include <stdio.h>

#include <jansson.h>

/* Writes s with <, >, & and " escaped. */
void rsw_html_esc(FILE *f, const char *s);

/* Writes the page for spec: {"title", "subtitle"?, "blocks": [...]} (rsw_page.js lists the block
 * kinds: section, grid, text, table, xy, bars, timeline, topology). Returns -1 if path cannot be
 * written. */
int rsw_page_write(const char *path, const json_t *spec);

/* Block builders (new references). */
json_t *rsw_block_section(const char *title, const char *text);
json_t *rsw_block_text(const char *text);
json_t *rsw_block_table(const char *id, json_t *head, json_t *rows);
/* An xy or bars chart: kind "xy" or "bars"; axes as label and unit. */
json_t *rsw_block_chart(const char *kind, const char *id, const char *title, const char *xlabel,
			const char *xunit, const char *ylabel, const char *yunit);
/* Appends child to the "blocks" of a section, grid or page. */
void rsw_block_add(json_t *parent, json_t *child);
/* A table row from printf-formatted cells separated by '\t'. */
json_t *rsw_row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
