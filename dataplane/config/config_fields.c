/* Reading a config entry's fields against the schema (config_schema.c), and the value readers
 * the compiler's own field types use. Every message is "FILE:LINE: TABLE|KEY: field: what was
 * expected"; in collect mode (set by the compiler) all of them are reported at once. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"

void rsw_cc_origin(struct cc *c, const yaml_node_t *n, char *out)
{
	snprintf(out, RSW_ORIGIN_MAX, "%s:%u", c->y.file, ydoc_line(n));
}

int rsw_cc_add(struct cc *c, struct rsw_table_write *w)
{
	if (rsw_txn_add(c->txn, w) < 0)
		return ydoc_error(&c->y, ydoc_root(&c->y), "(top level)", "out of memory");
	return 0;
}

int rsw_cc_want_map(struct cc *c, yaml_node_t *n, const char *key)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return ydoc_error(&c->y, n, key, "expected a mapping");
	return 0;
}

void rsw_cc_warn(struct cc *c, const yaml_node_t *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < c->n_warned; i++)
		if (!strcmp(c->warned[i], msg))
			return;
	char **w = realloc(c->warned, (c->n_warned + 1) * sizeof(*w));
	if (!w)
		return;
	c->warned = w;
	if (!(w[c->n_warned] = strdup(msg)))
		return;
	c->n_warned++;
	if (c->warn)
		fprintf(c->warn, "%s:%u: warning: %s\n", c->y.file, ydoc_line(at), msg);
}

static int parse_u64(const char *s, unsigned long long lo, unsigned long long hi,
		     unsigned long long *out)
{
	char *end;
	if (!s || !*s || s[0] == '-')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

int rsw_cc_get_u64(struct cc *c, yaml_node_t *v, const char *key, unsigned long long lo,
		   unsigned long long hi, unsigned long long *out)
{
	const char *s = ydoc_str(v);
	if (parse_u64(s, lo, hi, out) < 0)
		return ydoc_error(&c->y, v, key, "expected an integer %llu..%llu, got '%s'", lo, hi,
				  s ? s : "?");
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on")))
		*out = 1;
	else if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off")))
		*out = 0;
	else
		return -1;
	return 0;
}

int rsw_cc_get_name(struct cc *c, yaml_node_t *v, const char *key, char *out)
{
	const char *s = ydoc_str(v);
	if (!s || !*s || strlen(s) >= RSW_NAME_MAX)
		return ydoc_error(&c->y, v, key, "expected a name of 1..%d characters",
				  RSW_NAME_MAX - 1);
	strcpy(out, s);
	return 0;
}

int rsw_cc_port_by_name(struct cc *c, yaml_node_t *at, const char *key, const char *name)
{
	for (unsigned i = 0; i < c->n_ports; i++)
		if (!strcmp(c->ports[i].name, name))
			return (int)i;
	return ydoc_error(&c->y, at, key, "no port named '%s' in PORT", name);
}

/* Comma-separated priorities ("3,4", or "" for none) → bit mask. */
static int parse_prios(const char *s, uint8_t *mask)
{
	*mask = 0;
	if (!s)
		return -1;
	for (const char *p = s; *p;) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p || x < 0 || x > 7 || (*end && *end != ','))
			return -1;
		*mask |= (uint8_t)(1u << x);
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* 1 + index of s among "a|b|c", or 0. */
static int word_index(const char *words, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	int i = 1;
	for (const char *p = words; s && p && *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return i;
		p = bar ? bar + 1 : NULL;
	}
	return 0;
}

/* The modelled fields of fs, for "unknown field" messages. */
static void modelled_list(const struct rsw_field_schema *fs, char *out, size_t len)
{
	size_t o = 0;
	out[0] = 0;
	for (const struct rsw_field_schema *f = fs; f->name && o < len; f++)
		if (f->model == RSW_FM_MODELLED)
			o += (size_t)snprintf(out + o, len - o, "%s%s", o ? ", " : "", f->name);
}

/* Reads one modelled field's value; -1 after reporting it. */
static int read_value(struct cc *c, const struct rsw_field_schema *f, const char *key,
		      yaml_node_t *fv, struct rsw_fval *out)
{
	const char *s = ydoc_str(fv);
	int ok;
	out->s = s;
	switch (f->type) {
	case RSW_FT_UINT:
		ok = (f->words && (out->word = word_index(f->words, s))) ||
		     parse_u64(s, (unsigned long long)f->lo, (unsigned long long)f->hi, &out->u) == 0;
		break;
	case RSW_FT_INT: {
		char *end;
		errno = 0;
		out->i = s ? strtoll(s, &end, 10) : 0;
		ok = s && *s && !*end && !errno && out->i >= f->lo && out->i <= f->hi;
		break;
	}
	case RSW_FT_BOOL:
		ok = parse_bool(s, &out->b) == 0;
		break;
	case RSW_FT_ENUM:
		ok = (out->word = word_index(f->words, s)) != 0;
		break;
	case RSW_FT_NAME:
		ok = s && *s && strlen(s) < RSW_NAME_MAX;
		break;
	case RSW_FT_MAC:
		ok = s && rsw_mac_parse(s, out->mac) == 0;
		break;
	case RSW_FT_PRIOS:
		ok = parse_prios(s, &out->prios) == 0;
		break;
	case RSW_FT_TEXT:
		ok = s != NULL;
		break;
	default:
		ok = 1;
	}
	if (ok)
		return 0;
	char e[512];
	rsw_schema_expect(f, e, sizeof(e));
	if (s)
		return ydoc_error(&c->y, fv, key, "%s: expected %s, got '%s'", f->name, e, s);
	return ydoc_error(&c->y, fv, key, "%s: expected %s", f->name, e);
}

int rsw_cc_fields(struct cc *c, const struct rsw_field_schema *fs, const char *key, yaml_node_t *at,
		  yaml_node_t *v, struct rsw_fval *vals)
{
	unsigned n = 0, n_vals = 0, errs = 0, unknown = 0;
	/* vals holds the modelled fields, which come first (config_schema.h's field indices) */
	for (; fs[n].name; n++)
		if (fs[n].model == RSW_FM_MODELLED)
			n_vals = n + 1;
	memset(vals, 0, n_vals * sizeof(*vals));
	if (rsw_cc_want_map(c, v, key) < 0)
		return 1;
	YDOC_FOREACH_PAIR(&c->y, v, pr) {
		yaml_node_t *fk = ydoc_node(&c->y, pr->key), *fv = ydoc_node(&c->y, pr->value);
		const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
		int i = rsw_schema_field(fs, name);
		if (i < 0) {
			char list[512];
			modelled_list(fs, list, sizeof(list));
			ydoc_error(&c->y, fk, key, "unknown field '%s' (expected %s)", name, list);
			errs++;
			unknown++;
			continue;
		}
		const struct rsw_field_schema *f = &fs[i];
		if (f->model == RSW_FM_IGNORED)
			continue;
		if (f->model == RSW_FM_UNMODELLED) {
			char tname[64];
			snprintf(tname, sizeof(tname), "%.*s", (int)strcspn(key, "|"), key);
			if (c->sonic) {
				rsw_cc_warn(c, fk, "%s: field '%s' ignored (%s)", tname, name, f->help);
				continue;
			}
			ydoc_error(&c->y, fk, key, "%s: a SONiC field rocesw does not model (%s)", name,
				   f->help);
			errs++;
			continue;
		}
		if (vals[i].v) {
			ydoc_error(&c->y, fk, key, "%s: given twice", name);
			errs++;
			continue;
		}
		if (read_value(c, f, key, fv, &vals[i]) < 0) {
			errs++;
			continue;
		}
		vals[i].k = fk;
		vals[i].v = fv;
	}
	/* a misspelt field is reported once, as unknown, not also as the missing one */
	for (unsigned i = 0; i < n && !unknown; i++)
		if (fs[i].required && !vals[i].v && !vals[i].s) {
			char e[512];
			rsw_schema_expect(&fs[i], e, sizeof(e));
			if (fs[i].type == RSW_FT_CUSTOM)
				ydoc_error(&c->y, at, key, "missing '%s'", fs[i].name);
			else
				ydoc_error(&c->y, at, key, "missing '%s' (%s)", fs[i].name, e);
			errs++;
		}
	return (int)errs;
}
