#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "yaml_doc.h"

int ydoc_load(struct ydoc *d, const char *path, char *err, size_t errlen)
{
	yaml_parser_t parser;

	memset(d, 0, sizeof(*d));
	d->file = path;
	d->err = err;
	d->errlen = errlen;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int ok = yaml_parser_load(&parser, &d->doc);
	if (!ok) {
		char ctx[160] = "";
		if (parser.context)
			snprintf(ctx, sizeof(ctx), " (%s that starts at line %lu)", parser.context,
				 (unsigned long)parser.context_mark.line + 1);
		snprintf(err, errlen, "%s:%lu:%lu: YAML syntax error: %s%s", path,
			 (unsigned long)parser.problem_mark.line + 1,
			 (unsigned long)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "unknown", ctx);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	if (!ok)
		return -1;
	d->loaded = 1;
	if (!yaml_document_get_root_node(&d->doc)) {
		snprintf(err, errlen, "%s:1: the file is empty; expected a mapping of tables", path);
		ydoc_free(d); /* a failed load leaves nothing for the caller to free */
		return -1;
	}
	return 0;
}

void ydoc_free(struct ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	d->loaded = 0;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
	return yaml_document_get_root_node(&d->doc);
}

yaml_node_t *ydoc_node(struct ydoc *d, int id)
{
	return yaml_document_get_node(&d->doc, id);
}

unsigned ydoc_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 0;
}

const char *ydoc_str(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int ydoc_error(struct ydoc *d, const yaml_node_t *at, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s:%u: %s: %s", d->file, ydoc_line(at), key, msg);
	return -1;
}
