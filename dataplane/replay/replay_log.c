/* Replay's event log (replay_log.h). */
#include <stdlib.h>
#include <string.h>

#include "replay_log.h"
#include "room.h"

/* ---- lines held until their nanosecond ends ---- */

/* One line (with its newline) of the wake-up running, held. */
static void hold(struct rp_log *log, const char *s, size_t n)
{
	if (log->oom || rp_room((void **)&log->held, &log->held_cap, log->held_len + n, 1) < 0 ||
	    rp_room((void **)&log->line, &log->line_cap, log->n_line + 1, sizeof(*log->line)) < 0) {
		log->oom = 1;
		return;
	}
	memcpy(log->held + log->held_len, s, n);
	log->line[log->n_line++] = (struct rp_log_line){
		.id = log->id, .lines = log->lines++, .off = log->held_len, .len = n};
	log->held_len += n;
}

/* By wake-up, and as written within one: an entity woken twice in a nanosecond keeps its
 * wake-ups' order. */
static int line_cmp(const void *a, const void *b)
{
	const struct rp_log_line *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

void rp_log_flush(struct rp_log *log)
{
	size_t i;
	for (i = 1; i < log->n_line && log->line[i - 1].id <= log->line[i].id; i++)
		;
	if (i < log->n_line)
		qsort(log->line, log->n_line, sizeof(*log->line), line_cmp);
	for (i = 0; i < log->n_line; i++) {
		const struct rp_log_line *l = &log->line[i];
		if (log->keyed) /* the line's order key (replay_part.h) */
			fprintf(log->f, "%016llx%08x%08x ", (unsigned long long)log->t, l->id,
				l->lines);
		fwrite(log->held + l->off, 1, l->len, log->f);
	}
	log->n_line = log->held_len = 0;
}

static void start(struct rp_log *log, uint64_t t, uint32_t id)
{
	if (t != log->t && log->n_line)
		rp_log_flush(log);
	log->t = t;
	log->id = id;
	log->lines = 0;
}

void rp_log_wake(struct rp_log *log, uint64_t t, uint32_t id)
{
	start(log, t, id + 1);
}

void rp_log_samples(struct rp_log *log, uint64_t t)
{
	start(log, t, 0);
}

/* after every sample line's number ((switch * RSW_MAX_PORTS + port) * 8 + queue) */
#define CHECK_LINES 0x80000000u

void rp_log_check(struct rp_log *log, uint64_t t)
{
	start(log, t, 0);
	log->lines = CHECK_LINES;
}

void rp_log_end(struct rp_log *log)
{
	start(log, UINT64_MAX, 0);
}

void rp_log_close(struct rp_log *log)
{
	if (log->f)
		rp_log_flush(log);
	free(log->held);
	free(log->line);
	log->held = NULL;
	log->line = NULL;
	log->held_cap = log->line_cap = 0;
}

void rp_log_event(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		  const char *node, const char *port, json_t *fields)
{
	json_t *o = json_object();
	json_object_set_new(o, "t", json_integer((json_int_t)t));
	json_object_set_new(o, "event", json_string(kind));
	if (node_key)
		json_object_set_new(o, node_key, json_string(node));
	if (port)
		json_object_set_new(o, "port", json_string(port));
	if (fields)
		json_object_update(o, fields);
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s) {
		size_t n = strlen(s);
		s[n] = '\n'; /* (its NUL: the line is held by length) */
		hold(log, s, n + 1);
	} else {
		log->oom = 1;
	}
	free(s);
	json_decref(o);
	json_decref(fields);
}

void rp_log_pfc(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		const char *node, const char *port, uint8_t enable, const uint16_t time[8])
{
	json_t *f = json_object(), *a = json_array();
	json_object_set_new(f, "class_enable", json_integer(enable));
	for (unsigned i = 0; i < 8; i++)
		json_array_append_new(a, json_integer(time[i]));
	json_object_set_new(f, "time", a);
	rp_log_event(log, t, kind, node_key, node, port, f);
}

/* ---- lines written directly ---- */

struct line {
	char b[1024];
	size_t n;
	int full; /* did not fit: the line goes through jansson instead */
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->n + n > sizeof(l->b)) {
		l->full = 1;
		return;
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void put_u64(struct line *l, uint64_t v)
{
	char d[20];
	unsigned i = sizeof(d);
	do
		d[--i] = (char)('0' + v % 10);
	while (v /= 10);
	put(l, d + i, sizeof(d) - i);
}

/* A JSON string as jansson's compact dump writes it: quote and backslash escaped, the control
 * characters as \b \f \n \r \t or \u00XX, everything else (UTF-8 too) as is. */
static void put_str(struct line *l, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	/* the characters that end a run written as is: NUL, the control characters, '"', '\\' */
	static const uint8_t stop[256] = {[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1};
	put(l, "\"", 1);
	for (const char *run = s;; s++) {
		while (!stop[(unsigned char)*s])
			s++;
		unsigned char c = (unsigned char)*s;
		put(l, run, (size_t)(s - run));
		if (!c)
			break;
		char e[6] = {'\\', (char)c, 0};
		size_t n = 2;
		switch (c) {
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		case '"': case '\\': break;
		default:
			memcpy(e + 1, "u00", 3);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			n = 6;
		}
		put(l, e, n);
		run = s + 1;
	}
	put(l, "\"", 1);
}

static void put_key(struct line *l, const char *key)
{
	put(l, ",", 1);
	put_str(l, key);
	put(l, ":", 1);
}

void rp_log_fields(struct rp_log *log, uint64_t t, const char *kind, const char *node_key,
		   const char *node, const char *port, const struct rp_field *f, unsigned n)
{
	struct line l = {.n = 0};
	put(&l, "{\"t\":", 5);
	put_u64(&l, t);
	put_key(&l, "event");
	put_str(&l, kind);
	if (node_key) {
		put_key(&l, node_key);
		put_str(&l, node);
	}
	if (port) {
		put_key(&l, "port");
		put_str(&l, port);
	}
	for (unsigned i = 0; i < n; i++) {
		put_key(&l, f[i].key);
		if (f[i].s)
			put_str(&l, f[i].s);
		else
			put_u64(&l, f[i].u);
	}
	put(&l, "}\n", 2);
	if (l.full) { /* names this long are rare: the general path */
		json_t *o = json_object();
		for (unsigned i = 0; i < n; i++)
			json_object_set_new(o, f[i].key, f[i].s ? json_string(f[i].s)
								: json_integer((json_int_t)f[i].u));
		rp_log_event(log, t, kind, node_key, node, port, o);
		return;
	}
	hold(log, l.b, l.n);
}
