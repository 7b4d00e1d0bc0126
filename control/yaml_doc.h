/* Thin helpers over libyaml's document API that keep line numbers for error messages. */
#ifndef RSW_YAML_DOC_H
#define RSW_YAML_DOC_H

#include <stddef.h>
#include <yaml.h>

struct ydoc {
	yaml_document_t doc;
	const char *file;
	char *err;
	size_t errlen;
	int loaded;
};

/* Loads the first document of path. Returns -1 with "FILE:LINE:COL: problem" in err. */
int ydoc_load(struct ydoc *d, const char *path, char *err, size_t errlen);
void ydoc_free(struct ydoc *d);
yaml_node_t *ydoc_root(struct ydoc *d);
yaml_node_t *ydoc_node(struct ydoc *d, int id);
/* 1-based line of a node. */
unsigned ydoc_line(const yaml_node_t *n);
/* Scalar text, or NULL if n is not a scalar. */
const char *ydoc_str(const yaml_node_t *n);
/* Error "FILE:LINE: KEY: message"; returns -1. */
int ydoc_error(struct ydoc *d, const yaml_node_t *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define YDOC_FOREACH_PAIR(d, map, pair)                                                         \
	for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start;                          \
	     pair < (map)->data.mapping.pairs.top; pair++)
#define YDOC_FOREACH_ITEM(d, seq, item)                                                         \
	for (yaml_node_item_t *item = (seq)->data.sequence.items.start;                         \
	     item < (seq)->data.sequence.items.top; item++)

#endif
