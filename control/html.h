/* Helpers for the self-contained HTML pages the tools write (inline CSS and SVG, no script, no
 * network). */
#ifndef RSW_HTML_H
#define RSW_HTML_H

#include <stdio.h>

/* Writes s with <, >, & and " escaped. */
void rsw_html_esc(FILE *f, const char *s);
/* The document head with the shared style, and the opening <body>. */
void rsw_html_begin(FILE *f, const char *title);

#endif
