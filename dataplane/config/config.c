/* The config compiler: a switch config in SONiC CONFIG_DB vocabulary (a rocesw YAML file or a
 * SONiC config_db.json) → table writes. Every field is checked against the schema
 * (config_schema.c); this file reads DEVICE_METADATA, PORT, CABLE_LENGTH, the QoS maps and
 * PORT_QOS_MAP, then hands over to config_tm.c (buffers, schedulers, WRED, PFC watchdog),
 * config_hash.c, config_classifier.c and config_l3.c (neighbours, groups, routes). Each entry
 * becomes one table write carrying "FILE:LINE" as origin; all errors are reported at once and
 * nothing is written if there is any. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_cc.h"
#include "config_roceswd.h"

/* Walks the entries of table t (a mapping): for each, key node k and value node v. An entry in
 * error is reported and skipped, so that every error of the file is found in one pass. */
#define EACH_ENTRY(c, t, tname, k, v)                                                         \
	if (t && rsw_cc_want_map(c, t, tname) == 0)                                           \
		YDOC_FOREACH_PAIR(&(c)->y, t, pr_)                                            \
			for (yaml_node_t *k = ydoc_node(&(c)->y, pr_->key),                   \
					 *v = ydoc_node(&(c)->y, pr_->value), *once_ = k;     \
			     once_; once_ = NULL)

static void parse_device(struct cc *c, yaml_node_t *t)
{
	c->sw.dmac_check = 1;
	rsw_cc_buffer_convention(c, NULL, NULL, NULL);
	EACH_ENTRY(c, t, "DEVICE_METADATA", k, v) {
		struct rsw_fval f[DM_BUF_CONV + 1];
		if (!ydoc_str(k) || strcmp(ydoc_str(k), "localhost")) {
			ydoc_error(&c->y, k, "DEVICE_METADATA", "expected the one key 'localhost'");
			continue;
		}
		rsw_cc_fields(c, rsw_schema_tables[T_DEVICE].fields, "DEVICE_METADATA|localhost", k, v,
			      f);
		if (f[DM_HOSTNAME].v)
			strcpy(c->sw.hostname, f[DM_HOSTNAME].s);
		if (f[DM_MAC].v)
			memcpy(c->sw.router_mac, f[DM_MAC].mac, 6);
		if (f[DM_DMAC_CHECK].v)
			c->sw.dmac_check = f[DM_DMAC_CHECK].word == 1;
		rsw_cc_buffer_convention(c, f[DM_BUF_CONV].v ? f[DM_BUF_CONV].s : NULL,
					 f[DM_PLATFORM].v ? f[DM_PLATFORM].s : NULL,
					 f[DM_HWSKU].v ? f[DM_HWSKU].s : NULL);
	}
}

/* A new port's defaults: those of a SONiC RoCE switch. */
static void port_defaults(struct rsw_port_cfg *p)
{
	p->admin_up = 1;
	p->mtu = 9100;
	p->cable_length_m = 5;
	strcpy(p->dscp_to_tc_map, "AZURE");
	strcpy(p->tc_to_pg_map, "AZURE");
	p->pfc_enable = 0x18; /* PORT_QOS_MAP default of a SONiC RoCE switch: "3,4" */
}

/* speed: Mb/s, or line (unshaped); SONiC's configs may leave it to the platform. */
static void port_speed(struct cc *c, yaml_node_t *k, const char *key, const struct rsw_fval *f,
		       int errs, struct rsw_port_cfg *p)
{
	if (f[PORT_SPEED].v && f[PORT_SPEED].word) {
		/* line: unshaped; pause and headroom arithmetic use 400G */
		p->speed_mbps = 400000;
		p->tm.unshaped = 1;
	} else if (f[PORT_SPEED].v) {
		p->speed_mbps = (uint32_t)f[PORT_SPEED].u;
	} else if (!f[PORT_SPEED].s && c->sonic) {
		rsw_cc_warn(c, k, "PORT: a port without 'speed' (SONiC takes it from the "
			    "platform) runs unshaped, as speed: line");
		p->speed_mbps = 400000;
		p->tm.unshaped = 1;
	} else if (!f[PORT_SPEED].s && !errs) {
		/* (with errors, a misspelt speed was reported as unknown) */
		char e[256];
		rsw_schema_expect(&rsw_schema_tables[T_PORT].fields[PORT_SPEED], e, sizeof(e));
		ydoc_error(&c->y, k, key, "missing 'speed' (%s)", e);
	}
}

/* role: rocesw's host, uplink or downlink; SONiC's own roles are ignored with a warning. */
static void port_role(struct cc *c, const char *key, const struct rsw_fval *f,
		      struct rsw_port_cfg *p)
{
	const char *r = f[PORT_ROLE].s ? f[PORT_ROLE].s : "?";
	p->role = (uint8_t)rsw_port_role_from_name(r);
	if (p->role != RSW_ROLE_COUNT)
		return;
	if (c->sonic && strlen(r) == 3 && strstr("Ext|Int|Inb|Rec|Dpc", r))
		rsw_cc_warn(c, f[PORT_ROLE].v, "PORT: SONiC role '%s' ignored (rocesw's "
			    "roles are host, uplink, downlink)", r);
	else
		ydoc_error(&c->y, f[PORT_ROLE].v, key, "role: expected host, uplink or "
			   "downlink, got '%s'", r);
	p->role = 0;
}

/* The port's fields read (after its defaults). */
static void port_fields(struct cc *c, yaml_node_t *k, yaml_node_t *v, const char *key,
			struct rsw_port_cfg *p)
{
	struct rsw_fval f[PORT_ALIAS + 1];
	int errs = rsw_cc_fields(c, rsw_schema_tables[T_PORT].fields, key, k, v, f);
	port_speed(c, k, key, f, errs, p);
	if (f[PORT_MTU].v)
		p->mtu = (uint32_t)f[PORT_MTU].u;
	if (f[PORT_ROLE].v)
		port_role(c, key, f, p);
	if (f[PORT_DEVARGS].v) {
		if (strlen(f[PORT_DEVARGS].s) >= RSW_DEVARGS_MAX)
			ydoc_error(&c->y, f[PORT_DEVARGS].v, key, "devargs: longer than %d "
				   "characters", RSW_DEVARGS_MAX - 1);
		else
			strcpy(p->devargs, f[PORT_DEVARGS].s);
	}
	if (f[PORT_MAC].v) {
		memcpy(p->mac, f[PORT_MAC].mac, 6);
		p->has_mac = 1;
	}
	if (f[PORT_ADMIN].v)
		p->admin_up = f[PORT_ADMIN].word == 1;
	if (f[PORT_ALIAS].v)
		strcpy(p->alias, f[PORT_ALIAS].s);
}

static void parse_ports(struct cc *c, yaml_node_t *t)
{
	if (!t) {
		ydoc_error(&c->y, ydoc_root(&c->y), "PORT", "missing; a switch needs ports");
		return;
	}
	EACH_ENTRY(c, t, "PORT", k, v) {
		if (c->n_ports == RSW_MAX_PORTS) {
			ydoc_error(&c->y, k, "PORT", "more than %d ports", RSW_MAX_PORTS);
			return;
		}
		struct rsw_port_cfg *p = &c->ports[c->n_ports];
		memset(p, 0, sizeof(*p));
		if (rsw_cc_get_name(c, k, "PORT", p->name) < 0)
			continue;
		int dup = 0;
		for (unsigned i = 0; i < c->n_ports; i++)
			dup |= !strcmp(c->ports[i].name, p->name);
		if (dup) {
			ydoc_error(&c->y, k, "PORT", "port '%s' defined twice", p->name);
			continue;
		}
		char key[96];
		snprintf(key, sizeof(key), "PORT|%s", p->name);
		rsw_cc_origin(c, k, p->origin);
		port_defaults(p);
		/* counted even with errors in its fields, so later tables find it */
		c->n_ports++;
		port_fields(c, k, v, key, p);
	}
}

/* CABLE_LENGTH: { AZURE: { Ethernet0: 5m } } */
static void parse_cable(struct cc *c, yaml_node_t *t)
{
	EACH_ENTRY(c, t, "CABLE_LENGTH", k, v) {
		if (rsw_cc_want_map(c, v, "CABLE_LENGTH|AZURE") < 0)
			continue;
		YDOC_FOREACH_PAIR(&c->y, v, f) {
			yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
			const char *pn = ydoc_str(fk), *val = ydoc_str(fv);
			int pi = -1;
			for (unsigned i = 0; pn && i < c->n_ports; i++)
				if (!strcmp(c->ports[i].name, pn))
					pi = (int)i;
			/* SONiC's table lists every port of the platform, PORT only those in use */
			if (pi < 0 && c->sonic) {
				rsw_cc_warn(c, fk, "CABLE_LENGTH: entries for ports not in PORT ignored");
				continue;
			}
			if (pi < 0 && rsw_cc_port_by_name(c, fk, "CABLE_LENGTH", pn ? pn : "?") < 0)
				continue;
			char *end = NULL;
			long m = val ? strtol(val, &end, 10) : -1;
			if (!val || m < 0 || m > 100000 || end == val || (strcmp(end, "m") && *end)) {
				ydoc_error(&c->y, fv, "CABLE_LENGTH",
					   "expected a length in metres like 5m, got '%s'",
					   val ? val : "?");
				continue;
			}
			c->ports[pi].cable_length_m = (uint32_t)m;
		}
	}
}

/* "0..n_keys-1": "0..7" entries of a map; every error reported. */
static void read_map(struct cc *c, yaml_node_t *v, const char *key, unsigned n_keys,
		     uint8_t *map)
{
	YDOC_FOREACH_PAIR(&c->y, v, f) {
		yaml_node_t *fk = ydoc_node(&c->y, f->key), *fv = ydoc_node(&c->y, f->value);
		unsigned long long from, to;
		if (rsw_cc_get_u64(c, fk, key, 0, n_keys - 1, &from) == 0 &&
		    rsw_cc_get_u64(c, fv, key, 0, 7, &to) == 0)
			map[from] = (uint8_t)to;
	}
}

static void parse_qos_maps(struct cc *c, yaml_node_t *t, unsigned kind)
{
	const char *tname = kind == RSW_QOS_DSCP_TO_TC ? "DSCP_TO_TC_MAP" : "TC_TO_PRIORITY_GROUP_MAP";
	unsigned n_keys = kind == RSW_QOS_DSCP_TO_TC ? 64 : 8;
	EACH_ENTRY(c, t, tname, k, v) {
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_QOS_MAP};
		struct rsw_qos_map *q = &w.u.qos;
		q->kind = (uint8_t)kind;
		if (rsw_cc_get_name(c, k, tname, q->name) < 0)
			continue;
		char key[96];
		snprintf(key, sizeof(key), "%s|%s", tname, q->name);
		if (rsw_cc_want_map(c, v, key) < 0)
			continue;
		rsw_cc_origin(c, k, q->origin);
		/* SONiC: values not listed map to 0 */
		memset(q->map, 0, sizeof(q->map));
		read_map(c, v, key, n_keys, q->map);
		rsw_cc_add(c, &w);
	}
}

/* TC_TO_QUEUE_MAP and MAP_PFC_PRIORITY_TO_QUEUE: rocesw's queue is the TC (and the PFC
 * priority), so these maps are checked and accepted as the identity; another mapping is a
 * warning, not silently taken for something it is not. */
static void parse_identity_maps(struct cc *c, yaml_node_t *t, const char *tname)
{
	EACH_ENTRY(c, t, tname, k, v) {
		char key[96];
		snprintf(key, sizeof(key), "%s|%s", tname, ydoc_str(k) ? ydoc_str(k) : "?");
		if (rsw_cc_want_map(c, v, key) < 0)
			continue;
		uint8_t map[8];
		for (unsigned i = 0; i < 8; i++)
			map[i] = (uint8_t)i;
		read_map(c, v, key, 8, map);
		for (unsigned i = 0; i < 8; i++)
			if (map[i] != i)
				rsw_cc_warn(c, k, "%s: %u -> %u not modelled: the queue is the TC here "
					    "(%u -> %u)", key, i, map[i], i, i);
	}
}

static void parse_port_qos(struct cc *c, yaml_node_t *t)
{
	EACH_ENTRY(c, t, "PORT_QOS_MAP", k, v) {
		const char *pn = ydoc_str(k);
		char key[96];
		snprintf(key, sizeof(key), "PORT_QOS_MAP|%s", pn ? pn : "?");
		struct rsw_fval f[PQ_TC_TO_QUEUE + 1];
		int errs = rsw_cc_fields(c, rsw_schema_tables[T_PQOS].fields, key, k, v, f);
		/* SONiC's "global" entry, and the port-list keys "Ethernet0,Ethernet4" */
		char names[1024];
		snprintf(names, sizeof(names), "%s", pn ? pn : "?");
		if (c->sonic && !strcmp(names, "global")) {
			rsw_cc_warn(c, k, "PORT_QOS_MAP: entry 'global' ignored (maps are per port)");
			continue;
		}
		char *save = NULL;
		for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
			int pi = rsw_cc_port_by_name(c, k, "PORT_QOS_MAP", n);
			if (pi < 0 || errs)
				continue;
			struct rsw_port_cfg *p = &c->ports[pi];
			if (f[PQ_DSCP_TO_TC].v)
				strcpy(p->dscp_to_tc_map, f[PQ_DSCP_TO_TC].s);
			if (f[PQ_TC_TO_PG].v)
				strcpy(p->tc_to_pg_map, f[PQ_TC_TO_PG].s);
			if (f[PQ_PFC_ENABLE].v)
				p->pfc_enable = f[PQ_PFC_ENABLE].prios;
			if (f[PQ_PFCWD_SW].v) {
				p->tm.pfcwd_enable = f[PQ_PFCWD_SW].prios;
				p->tm.pfcwd_set = 1;
			}
			if (f[PQ_PFC_PAUSE].v)
				p->tm.pfc_pause_quanta = (uint16_t)f[PQ_PFC_PAUSE].u;
		}
		/* the named TC_TO_QUEUE_MAP must exist when the file has that table */
		if (f[PQ_TC_TO_QUEUE].v && c->tables[T_TCQ]) {
			int found = 0;
			YDOC_FOREACH_PAIR(&c->y, c->tables[T_TCQ], q)
				found |= !strcmp(ydoc_str(ydoc_node(&c->y, q->key)) ?: "",
						 f[PQ_TC_TO_QUEUE].s);
			if (!found)
				ydoc_error(&c->y, f[PQ_TC_TO_QUEUE].v, key,
					   "tc_to_queue_map: no map named '%s' in TC_TO_QUEUE_MAP",
					   f[PQ_TC_TO_QUEUE].s);
		}
	}
}

/* Edit distance of two short names (0..UINT_MAX if either is long). */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[40];
	if (la >= 40 || lb >= 40)
		return ~0u;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* An unknown top-level key is not quoted: the file may be something else than a config (a
 * password file named by mistake or on purpose), and its first line would be the key. A close
 * miss of a table name is named instead, which says nothing the table list does not. */
static int unknown_table(struct cc *c, yaml_node_t *k, const char *name)
{
	const char *near = NULL;
	char list[1024];
	size_t o = 0;
	for (int i = 0; i < T_COUNT; i++) {
		const char *t = rsw_schema_tables[i].name;
		if (name && !near && edit_distance(name, t) <= 2)
			near = t;
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", t);
	}
	return ydoc_error(&c->y, k, "(top level)", "unknown table%s%s%s (expected %s)",
			  near ? "; did you mean " : "", near ? near : "", near ? "?" : "", list);
}

/* A SONiC config_db.json: a JSON object (the file starts with '{') naming a CONFIG_DB table. */
static int looks_sonic(struct cc *c, const char *buf)
{
	while (buf && (*buf == ' ' || *buf == '\t' || *buf == '\n' || *buf == '\r'))
		buf++;
	if (!buf || *buf != '{')
		return 0;
	YDOC_FOREACH_PAIR(&c->y, ydoc_root(&c->y), pr)
		if (rsw_schema_table(ydoc_str(ydoc_node(&c->y, pr->key))))
			return 1;
	return 0;
}

/* Loads path (or, with fd >= 0, the file open on fd, path naming it in messages) and finds its
 * tables. An unknown or repeated table is an error; in a SONiC file, a table SONiC has and
 * rocesw does not model (any table not in the schema) is a warning. */
static int load_tables(struct cc *c, const char *path, int fd, const struct rsw_config_opts *o,
		       char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rfd = fd >= 0 ? fd : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (rfd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	int rc = ydoc_read_fd(rfd, path, &buf, &len, err, errlen);
	if (fd < 0)
		close(rfd);
	if (rc < 0)
		return -1;
	rc = ydoc_load_buffer(&c->y, path, buf, len, err, errlen);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	yaml_node_t *root = ydoc_root(&c->y);
	if (root->type != YAML_MAPPING_NODE) {
		free(buf);
		return ydoc_error(&c->y, root, "(top level)", "expected a mapping of tables like PORT:");
	}
	c->sonic = o && o->sonic >= 0 ? o->sonic : looks_sonic(c, buf);
	free(buf);
	c->y.collect = 1;
	YDOC_FOREACH_PAIR(&c->y, root, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key);
		const char *name = ydoc_str(k);
		const struct rsw_table_schema *t = rsw_schema_table(name);
		int i = t ? (int)(t - rsw_schema_tables) : -1;
		if (t && i >= T_COUNT && c->sonic) {
			rsw_cc_warn(c, k, "table %s ignored (%s)", name, t->help);
		} else if (t && i >= T_COUNT) {
			ydoc_error(&c->y, k, name, "a SONiC table rocesw does not model (%s)", t->help);
		} else if (!t && c->sonic) {
			rsw_cc_warn(c, k, "%s %s ignored (not modelled)",
				    ydoc_node(&c->y, pr->value)->type == YAML_MAPPING_NODE ? "table"
											 : "key",
				    name ? name : "?");
		} else if (!t) {
			unknown_table(c, k, name);
		} else if (c->tables[i]) {
			ydoc_error(&c->y, k, name, "table appears twice");
		} else {
			c->tables[i] = ydoc_node(&c->y, pr->value);
		}
	}
	/* a file with no table of a config is not one: its other errors would be noise */
	int any = 0;
	for (int i = 0; i < T_COUNT; i++)
		any |= c->tables[i] != NULL;
	return c->y.n_err && !any ? -1 : 0;
}

static struct cc *cc_new(struct rsw_txn *txn, const struct rsw_config_opts *o, char *err,
			 size_t errlen)
{
	struct cc *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->txn = txn;
	c->warn = o ? o->warnings : NULL;
	return c;
}

/* The collected errors into err; frees c. Returns rc, or -1 if there were errors. */
static int cc_finish(struct cc *c, int rc)
{
	if (c->y.n_err) {
		ydoc_errors_flush(&c->y);
		rc = -1;
	}
	free(c->ars);
	for (size_t i = 0; i < c->n_warned; i++)
		free(c->warned[i]);
	free(c->warned);
	ydoc_free(&c->y);
	free(c);
	return rc;
}

int rsw_config_hash_policies(const char *path, struct rsw_txn *txn, char *err, size_t errlen)
{
	struct cc *c = cc_new(txn, NULL, err, errlen);
	if (!c)
		return -1;
	int rc = load_tables(c, path, -1, NULL, err, errlen);
	if (rc == 0 && !c->tables[T_SWHASH] && !c->tables[T_HASHPOL])
		rc = ydoc_error(&c->y, ydoc_root(&c->y), "(top level)",
				"no SWITCH_HASH or HASH_POLICY table: no hash policy to read");
	if (rc == 0)
		rsw_cc_hash(c);
	return cc_finish(c, rc);
}

int rsw_config_compile(const char *path, struct rsw_txn *txn, char *err, size_t errlen)
{
	return rsw_config_compile_opts(-1, path, NULL, txn, err, errlen);
}

int rsw_config_compile_fd(int fd, const char *name, struct rsw_txn *txn, char *err, size_t errlen)
{
	return rsw_config_compile_opts(fd, name, NULL, txn, err, errlen);
}

int rsw_config_compile_opts(int fd, const char *name, const struct rsw_config_opts *o,
			    struct rsw_txn *txn, char *err, size_t errlen)
{
	struct cc *c = cc_new(txn, o, err, errlen);
	if (!c)
		return -1;
	if (load_tables(c, name, fd, o, err, errlen) < 0)
		return cc_finish(c, -1);
	struct rsw_daemon_cfg daemon; /* checked here, used by roceswd */
	rsw_daemon_cfg_defaults(&daemon);
	rsw_daemon_cfg_parse(c, c->tables[T_ROCESWD], &daemon);
	parse_device(c, c->tables[T_DEVICE]);
	parse_ports(c, c->tables[T_PORT]);
	parse_cable(c, c->tables[T_CABLE]);
	parse_qos_maps(c, c->tables[T_DSCP], RSW_QOS_DSCP_TO_TC);
	parse_qos_maps(c, c->tables[T_TCPG], RSW_QOS_TC_TO_PG);
	parse_identity_maps(c, c->tables[T_TCQ], "TC_TO_QUEUE_MAP");
	parse_identity_maps(c, c->tables[T_PFCQ], "MAP_PFC_PRIORITY_TO_QUEUE");
	parse_port_qos(c, c->tables[T_PQOS]);
	/* the traffic manager resolves profiles per port: only from ports without errors */
	if (!c->y.n_err)
		rsw_cc_tm(c);
	rsw_cc_hash(c);
	rsw_cc_ars(c);
	struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_SWITCH};
	w.u.sw = c->sw;
	rsw_cc_add(c, &w);
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct rsw_table_write pw = {.op = RSW_W_SET, .table = RSW_T_PORT};
		pw.u.port = c->ports[i];
		rsw_cc_add(c, &pw);
	}
	rsw_cc_classifier(c);
	rsw_cc_interface(c, c->tables[T_INTF]);
	rsw_cc_l3(c);
	return cc_finish(c, 0);
}

int rsw_config_apply(struct rsw_switch *sw, const char *path, char *err, size_t errlen)
{
	return rsw_config_apply_opts(sw, path, NULL, err, errlen);
}

int rsw_config_apply_opts(struct rsw_switch *sw, const char *path,
			  const struct rsw_config_opts *o, char *err, size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = rsw_config_compile_opts(-1, path, o, txn, err, errlen);
	if (rc == 0)
		rc = rsw_switch_commit(sw, txn, err, errlen);
	rsw_txn_free(txn);
	return rc;
}
