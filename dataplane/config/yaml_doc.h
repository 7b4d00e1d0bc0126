/* Thin helpers over libyaml's document API that keep line numbers for error messages. */
#ifndef RSW_YAML_DOC_H
#define RSW_YAML_DOC_H

#include <stddef.h>
#include <yaml.h>

struct ydoc_msg;

struct ydoc {
	yaml_document_t doc;
	const char *file;
	char *err;
	size_t errlen;
	int loaded;
	/* With collect set, ydoc_error records each error (in ydoc_errors_flush's list) instead
	 * of overwriting err: a compiler can report every error of a file at once. */
	int collect;
	unsigned n_err;
	struct ydoc_msg *msgs;
	size_t n_msgs, cap_msgs;
};

/* At most this many errors are listed; the rest are counted. */
#define YDOC_MAX_LISTED 50

/* The largest config file read: a million routes fit with room to spare; a bound on what a
 * control client can make the dataplane allocate. */
#define YDOC_MAX_BYTES (512u << 20)

/* Loads the first document of path (opened without blocking; only a regular file is read).
 * Returns -1 with "FILE:LINE:COL: problem" in err. */
int ydoc_load(struct ydoc *d, const char *path, char *err, size_t errlen);
/* The same from an open descriptor (e.g. one a control client passed): fstat()ed, only a regular
 * file of at most YDOC_MAX_BYTES, read from offset 0 without moving the descriptor's offset.
 * name is for messages only and must outlive d. */
int ydoc_load_fd(struct ydoc *d, int fd, const char *name, char *err, size_t errlen);
/* The same from memory: buf holds len bytes of YAML. */
int ydoc_load_buffer(struct ydoc *d, const char *name, const char *buf, size_t len, char *err,
		     size_t errlen);
/* Reads a whole regular file from fd into a malloc()ed, NUL-terminated *out (the checks of
 * ydoc_load_fd). Returns -1 with "NAME: why" in err. */
int ydoc_read_fd(int fd, const char *name, char **out, size_t *len, char *err, size_t errlen);
void ydoc_free(struct ydoc *d);
yaml_node_t *ydoc_root(struct ydoc *d);
yaml_node_t *ydoc_node(struct ydoc *d, int id);
/* 1-based line of a node. */
unsigned ydoc_line(const yaml_node_t *n);
/* Scalar text, or NULL if n is not a scalar. */
const char *ydoc_str(const yaml_node_t *n);
/* Writes the collected errors into err, by line, one a line; frees them. */
void ydoc_errors_flush(struct ydoc *d);
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
