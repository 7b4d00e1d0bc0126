#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "dataplane/config/whole_file.h"
#include "html.h"

/* Generated from the files in control/report at build time (control/labs/report/embed.py). */
extern const char rsw_asset_uplot_js[], rsw_asset_uplot_css[], rsw_asset_page_js[],
	rsw_asset_page_css[];

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

static int dump_cb(const char *buf, size_t size, void *data)
{
	return fwrite(buf, 1, size, data) == size ? 0 : -1;
}

int rsw_page_write(const char *path, const json_t *spec)
{
	/* built in memory, then written whole (never a page cut short by a full disk) */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -1;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
	rsw_html_esc(f, json_string_value(json_object_get(spec, "title")) ?: "rocesw");
	fprintf(f, "</title>\n<style>%s\n%s</style></head><body>\n<div id=\"rsw-root\"></div>\n",
		rsw_asset_uplot_css, rsw_asset_page_css);
	/* JSON_ESCAPE_SLASH writes "</" as "<\/": a string in the data cannot close the script */
	fputs("<script type=\"application/json\" id=\"rsw-page\">", f);
	json_dump_callback(spec, dump_cb, f, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(10));
	fprintf(f, "</script>\n<script>%s</script>\n<script>%s</script>\n</body></html>\n",
		rsw_asset_uplot_js, rsw_asset_page_js);
	char err[256];
	int rc = fclose(f) == 0 ? rsw_file_write_whole(path, buf, len, 0666, err, sizeof(err)) : -1;
	int e = errno;
	free(buf);
	errno = e; /* the reason, for the caller's message */
	return rc;
}

json_t *rsw_block_section(const char *title, const char *text)
{
	json_t *b = json_pack("{s:s, s:s, s:[]}", "kind", "section", "title", title, "blocks");
	if (text)
		json_object_set_new(b, "text", json_string(text));
	return b;
}

json_t *rsw_block_text(const char *text)
{
	return json_pack("{s:s, s:s}", "kind", "text", "text", text);
}

json_t *rsw_block_table(const char *id, json_t *head, json_t *rows)
{
	return json_pack("{s:s, s:s, s:o, s:o}", "kind", "table", "id", id, "head", head, "rows",
			 rows);
}

json_t *rsw_block_chart(const char *kind, const char *id, const char *title, const char *xlabel,
			const char *xunit, const char *ylabel, const char *yunit)
{
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:[], s:[]}", "kind", kind,
			 "id", id, "title", title, "x", "label", xlabel, "unit", xunit, "y", "label",
			 ylabel, "unit", yunit, "series", "data");
}

void rsw_block_add(json_t *parent, json_t *child)
{
	json_array_append_new(json_object_get(parent, "blocks"), child);
}

json_t *rsw_row(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_t *row = json_array();
	for (char *s = buf, *tab;; s = tab + 1) {
		tab = strchr(s, '\t');
		if (tab)
			*tab = 0;
		json_array_append_new(row, json_string(s));
		if (!tab)
			break;
	}
	return row;
}
