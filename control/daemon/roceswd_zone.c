/* Snapshots of a zone for roceswd --zone: the zone file and every switch config copied into one
 * directory, the zone file rewritten (libyaml's emitter) to name the copies, so that a restarted
 * dataplane starts from exactly what was last applied and an edit made during a reload cannot
 * change what it applies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "ctl_client.h"
#include "dataplane/config/whole_file.h"
#include "daemon_log.h"
#include "roceswd_validate.h"
#include "roceswd_zone.h"

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A YAML node as JSON (scalars as strings): what two topologies are compared on. */
static json_t *to_json(yaml_document_t *doc, yaml_node_t *n, unsigned depth)
{
	if (!n || depth > 64)
		return json_null();
	if (n->type == YAML_SCALAR_NODE)
		return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
	if (n->type == YAML_SEQUENCE_NODE) {
		json_t *a = json_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++)
			json_array_append_new(a, to_json(doc, yaml_document_get_node(doc, *it), depth + 1));
		return a;
	}
	json_t *o = json_object();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		json_object_set_new(o, k ? k : "?",
				    to_json(doc, yaml_document_get_node(doc, p->value), depth + 1));
	}
	return o;
}

static yaml_node_t *get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		if (k && !strcmp(k, key))
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static char *resolve(const char *zone, const char *rel)
{
	if (rel[0] == '/')
		return strdup(rel);
	char copy[PATH_MAX], *out;
	snprintf(copy, sizeof(copy), "%s", zone);
	return asprintf(&out, "%s/%s", dirname(copy), rel) < 0 ? NULL : out;
}

static int load(const char *zone, yaml_document_t *doc, char *err, size_t errlen)
{
	FILE *f = fopen(zone, "re");
	if (!f) {
		snprintf(err, errlen, "%s: %s", zone, strerror(errno));
		return -1;
	}
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	int ok = yaml_parser_load(&p, doc);
	if (!ok)
		snprintf(err, errlen, "%s:%zu: %s", zone, p.problem_mark.line + 1,
			 p.problem ? p.problem : "not YAML");
	yaml_parser_delete(&p);
	fclose(f);
	return ok ? 0 : -1;
}

static void sort_strings(json_t *a)
{
	size_t n = json_array_size(a);
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(json_string_value(json_array_get(a, k - 1)),
						   json_string_value(json_array_get(a, k))) > 0;
		     k--) {
			json_t *x = json_incref(json_array_get(a, k - 1));
			json_array_remove(a, k - 1);
			json_array_insert_new(a, k, x);
		}
}

/* The switches and topology of a loaded zone document; with dir, each SWITCH config scalar is
 * rewritten to NAME.yaml (the copy in dir). */
static int parse(const char *zone, yaml_document_t *doc, const char *dir, struct rsw_zsnap *s,
		 char *err, size_t errlen)
{
	yaml_node_t *root = yaml_document_get_root_node(doc);
	yaml_node_t *sw = get(doc, root, "SWITCH");
	if (!sw || sw->type != YAML_MAPPING_NODE) {
		snprintf(err, errlen, "%s: SWITCH: expected a mapping of switch name to {config: FILE}",
			 zone);
		return -1;
	}
	size_t cap = (size_t)(sw->data.mapping.pairs.top - sw->data.mapping.pairs.start);
	s->name = calloc(cap + 1, sizeof(char *));
	s->src = calloc(cap + 1, sizeof(char *));
	s->copy = calloc(cap + 1, sizeof(char *));
	json_t *names = json_array();
	s->topo = json_pack("{s:o, s:o, s:o, s:o}", "zone",
			    to_json(doc, get(doc, get(doc, root, "ZONE"), "name"), 0), "switches", names,
			    "HOST", to_json(doc, get(doc, root, "HOST"), 0), "LINK",
			    to_json(doc, get(doc, root, "LINK"), 0));
	if (!s->name || !s->src || !s->copy || !s->topo)
		goto oom;
	for (yaml_node_pair_t *p = sw->data.mapping.pairs.start; p < sw->data.mapping.pairs.top;
	     p++) {
		const char *name = scalar(yaml_document_get_node(doc, p->key));
		yaml_node_t *cfg = get(doc, yaml_document_get_node(doc, p->value), "config");
		if (!name || !*name || strchr(name, '/') || strchr(name, '|') || !scalar(cfg)) {
			snprintf(err, errlen, "%s:%zu: SWITCH: %s: expected NAME: {config: FILE}", zone,
				 yaml_document_get_node(doc, p->key)->start_mark.line + 1,
				 name ? name : "?");
			return -1;
		}
		unsigned i = s->n++;
		s->name[i] = strdup(name);
		s->src[i] = resolve(zone, scalar(cfg));
		if (!s->name[i] || !s->src[i] || json_array_append_new(names, json_string(name)) < 0 ||
		    (dir && asprintf(&s->copy[i], "%s/%s.yaml", dir, name) < 0))
			goto oom;
		if (dir) {
			char *v = NULL;
			if (asprintf(&v, "%s.yaml", name) < 0)
				goto oom;
			free(cfg->data.scalar.value);
			cfg->data.scalar.value = (yaml_char_t *)v;
			cfg->data.scalar.length = strlen(v);
		}
	}
	sort_strings(names); /* the set of switch names, whatever their order */
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

int rsw_zsnap_read(const char *zone, struct rsw_zsnap *s, char *err, size_t errlen)
{
	yaml_document_t doc;
	memset(s, 0, sizeof(*s));
	if (load(zone, &doc, err, errlen) < 0)
		return -1;
	int rc = parse(zone, &doc, NULL, s, err, errlen);
	yaml_document_delete(&doc);
	if (rc < 0)
		rsw_zsnap_free(s);
	return rc;
}

void rsw_zsnap_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static int emit(const char *path, yaml_document_t *doc)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -1;
	yaml_emitter_t e;
	yaml_emitter_initialize(&e);
	yaml_emitter_set_output_file(&e, f);
	yaml_emitter_set_unicode(&e, 1);
	int ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, doc) && yaml_emitter_close(&e) &&
		 yaml_emitter_flush(&e);
	yaml_emitter_delete(&e);
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int rsw_zsnap_take(const char *zone, const char *dir, struct rsw_zsnap *s, char *err,
		   size_t errlen)
{
	yaml_document_t doc;
	memset(s, 0, sizeof(*s));
	rsw_zsnap_remove(dir);
	if (mkdir(dir, 0700) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (load(zone, &doc, err, errlen) < 0)
		return -1;
	if (parse(zone, &doc, dir, s, err, errlen) < 0) {
		yaml_document_delete(&doc);
		goto fail;
	}
	char why[1024];
	for (unsigned i = 0; i < s->n; i++)
		if (rsw_file_copy_whole(s->src[i], s->copy[i], 0600, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "switch %s: %s", s->name[i], why);
			yaml_document_delete(&doc);
			goto fail;
		}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/zone.yaml", dir);
	if (emit(path, &doc) < 0) { /* the emitter took the document */
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	rsw_zsnap_free(s);
	return -1;
}

void rsw_zsnap_free(struct rsw_zsnap *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		free(s->name[i]);
		free(s->src[i]);
		free(s->copy[i]);
	}
	free(s->name);
	free(s->src);
	free(s->copy);
	json_decref(s->topo);
	memset(s, 0, sizeof(*s));
}

int rsw_zsnap_same_topology(const struct rsw_zsnap *a, const struct rsw_zsnap *b, char *err,
			    size_t errlen)
{
	static const char *const parts[][2] = {
		{"switches", "the switches (SWITCH names)"},
		{"LINK", "the LINK table"},
		{"HOST", "the HOST table"},
		{"zone", "the zone's name (ZONE name)"},
	};
	for (unsigned k = 0; k < 4; k++)
		if (!json_equal(json_object_get(a->topo, parts[k][0]),
				json_object_get(b->topo, parts[k][0]))) {
			snprintf(err, errlen, "%s changed: a topology change needs a restart of the "
				 "dataplane (systemctl restart roceswd; it starts from the new zone)",
				 parts[k][1]);
			return -1;
		}
	return 0;
}

unsigned rsw_zsnap_validate(const struct rsw_zsnap *s, const char *what)
{
	unsigned refused = 0;
	char *list = NULL;
	for (unsigned i = 0; i < s->n; i++) {
		char err[8192];
		if (rsw_validate(s->copy[i], s->src[i], err, sizeof(err)) == 0)
			continue;
		refused++;
		for (char *save, *line = strtok_r(err, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			rsw_log(LOG_ERR, "%s: switch %s: %s", what, s->name[i], line);
		char *l = NULL;
		if (asprintf(&l, "%s%s%s", list ? list : "", list ? ", " : "", s->name[i]) >= 0) {
			free(list);
			list = l;
		}
	}
	if (refused)
		rsw_log(LOG_ERR, "%s: %u of %u switches refused (%s), no switch changed", what,
			refused, s->n, list ? list : "");
	free(list);
	return refused;
}

int rsw_zsnap_send_reload(const struct rsw_zsnap *s, const char *socket, char *err,
			  size_t errlen)
{
	if (s->n > RSW_CTL_CLIENT_MAX_FDS) {
		snprintf(err, errlen, "a zone reload passes every switch's config open, at most %d "
			 "(this zone has %u switches)", RSW_CTL_CLIENT_MAX_FDS, s->n);
		return -1;
	}
	int fds[RSW_CTL_CLIENT_MAX_FDS], rc = -1;
	unsigned n = 0;
	json_t *names = json_array(), *files = json_array();
	for (; n < s->n; n++) {
		fds[n] = open(s->copy[n], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fds[n] < 0) {
			snprintf(err, errlen, "%s: %s", s->copy[n], strerror(errno));
			goto out;
		}
		json_array_append_new(names, json_string(s->name[n]));
		json_array_append_new(files, json_string(s->src[n]));
	}
	json_t *req = json_pack("{s:s, s:O, s:O}", "op", "reload", "switches", names, "files", files);
	rc = req ? rsw_ctl_send_fds(socket, req, fds, n, err, errlen) : -1;
	json_decref(req);
out:
	while (n > 0)
		close(fds[--n]);
	json_decref(names);
	json_decref(files);
	return rc;
}

int rsw_zsnap_promote(const char *next, const char *running)
{
	if (renameat2(AT_FDCWD, next, AT_FDCWD, running, RENAME_EXCHANGE) == 0) {
		rsw_zsnap_remove(next); /* now the previous running snapshot */
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	return rename(next, running); /* the first one */
}
