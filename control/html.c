#include "html.h"

void rsw_html_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

void rsw_html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
	rsw_html_esc(f, title);
	fputs("</title>\n<style>body{font-family:sans-serif;margin:2em}"
	      "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}"
	      "th{border-bottom:1px solid #888}.bar{fill:#4a7ab5}.axis{stroke:#888}"
	      ".xoff{fill:#c0392b}.line{fill:none;stroke-width:1.5}"
	      "svg text{font-size:10px}</style></head><body>\n", f);
}
