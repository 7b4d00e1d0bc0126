#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "yaml_doc.h"

struct ydoc_msg {
	unsigned line, seq;
	char *text;
};

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

int ydoc_read_fd(int fd, const char *name, char **out, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	*out = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	/* a FIFO or device could block the reader or never end: only a file of known size */
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: is %s; expected a config file", name, file_kind(st.st_mode));
		return -1;
	}
	if ((uintmax_t)st.st_size > YDOC_MAX_BYTES) {
		snprintf(err, errlen, "%s: %jd bytes; a config may be at most %u bytes", name,
			 (intmax_t)st.st_size, YDOC_MAX_BYTES);
		return -1;
	}
	/* pread from 0: the descriptor's offset is shared with whoever passed it */
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	for (;;) {
		ssize_t r = pread(fd, buf + n, cap - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", name, strerror(errno));
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			/* the file grew while we read it */
			snprintf(err, errlen, "%s: changed while being read; try again", name);
			free(buf);
			return -1;
		}
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

int ydoc_load_buffer(struct ydoc *d, const char *name, const char *buf, size_t len, char *err,
		     size_t errlen)
{
	yaml_parser_t parser;

	memset(d, 0, sizeof(*d));
	d->file = name;
	d->err = err;
	d->errlen = errlen;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	int ok = yaml_parser_load(&parser, &d->doc);
	if (!ok) {
		/* libyaml's problem and context are fixed phrases: the message names the place and
		 * what was expected, never the text found there */
		char ctx[160] = "";
		if (parser.context)
			snprintf(ctx, sizeof(ctx), " (%s that starts at line %lu)", parser.context,
				 (unsigned long)parser.context_mark.line + 1);
		snprintf(err, errlen, "%s:%lu:%lu: YAML syntax error: %s%s", name,
			 (unsigned long)parser.problem_mark.line + 1,
			 (unsigned long)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "unknown", ctx);
	}
	yaml_parser_delete(&parser);
	if (!ok)
		return -1;
	d->loaded = 1;
	if (!yaml_document_get_root_node(&d->doc)) {
		snprintf(err, errlen, "%s:1: the file is empty; expected a mapping of tables", name);
		ydoc_free(d); /* a failed load leaves nothing for the caller to free */
		return -1;
	}
	return 0;
}

int ydoc_load_fd(struct ydoc *d, int fd, const char *name, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	memset(d, 0, sizeof(*d));
	if (ydoc_read_fd(fd, name, &buf, &len, err, errlen) < 0)
		return -1;
	int rc = ydoc_load_buffer(d, name, buf, len, err, errlen);
	free(buf);
	return rc;
}

int ydoc_load(struct ydoc *d, const char *path, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	/* O_NONBLOCK: naming a FIFO must not hang the open; ydoc_read_fd then refuses it */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	int rc = ydoc_load_fd(d, fd, path, err, errlen);
	close(fd);
	return rc;
}

void ydoc_free(struct ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	d->loaded = 0;
	for (size_t i = 0; i < d->n_msgs; i++)
		free(d->msgs[i].text);
	free(d->msgs);
	d->msgs = NULL;
	d->n_msgs = d->cap_msgs = 0;
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
	char msg[512], line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s:%u: %s: %s", d->file, ydoc_line(at), key, msg);
	d->n_err++;
	if (!d->collect) {
		snprintf(d->err, d->errlen, "%s", line);
		return -1;
	}
	if (d->n_msgs == d->cap_msgs) {
		size_t cap = d->cap_msgs ? 2 * d->cap_msgs : 16;
		struct ydoc_msg *m = realloc(d->msgs, cap * sizeof(*m));
		if (!m)
			return -1; /* counted, not listed */
		d->msgs = m;
		d->cap_msgs = cap;
	}
	char *text = strdup(line);
	if (text)
		d->msgs[d->n_msgs++] = (struct ydoc_msg){ydoc_line(at), d->n_err, text};
	return -1;
}

static int msg_order(const void *a, const void *b)
{
	const struct ydoc_msg *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void ydoc_errors_flush(struct ydoc *d)
{
	size_t o = 0;
	if (d->n_msgs) { /* (qsort may not be given the null array of no messages) */
		d->err[0] = 0;
		qsort(d->msgs, d->n_msgs, sizeof(*d->msgs), msg_order);
	}
	for (size_t i = 0; i < d->n_msgs; i++) {
		if (i < YDOC_MAX_LISTED && o < d->errlen)
			o += (size_t)snprintf(d->err + o, d->errlen - o, "%s%s", i ? "\n" : "",
					      d->msgs[i].text);
		free(d->msgs[i].text);
	}
	if (d->n_err > YDOC_MAX_LISTED && o < d->errlen)
		snprintf(d->err + o, d->errlen - o, "\n(%u more errors)", d->n_err - YDOC_MAX_LISTED);
	free(d->msgs);
	d->msgs = NULL;
	d->n_msgs = d->cap_msgs = 0;
}
