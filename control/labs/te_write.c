/* rocesw, SONiC and EOS forms of TE's policy routes, and their table writes. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "te_write.h"
#include "dataplane/config/whole_file.h"
#include "dataplane/pkt/addr.h"
#include "dataplane/tables/state.h"
#include "dataplane/tables/switch.h"

static const char *port_name(const struct rsw_zone *z, unsigned sw, unsigned port)
{
	return z->sw[sw].sw->state->ports[port].name;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (n + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			char *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* A SONiC config_db.json (a JSON object) rather than YAML: what it holds, not its name. */
static int is_json(const char *text)
{
	while (isspace((unsigned char)*text))
		text++;
	return *text == '{';
}

static int config_is_json(const char *path)
{
	size_t len;
	char *text = read_all(path, &len);
	int json = text && is_json(text);
	free(text);
	return json;
}

/* A route of the switch's own config on the same <port, prefix> would be inserted twice. */
static int clashes(const struct rsw_zone *z, const struct rsw_te_route *r, char *err,
		   size_t errlen)
{
	const struct rsw_state *st = z->sw[r->sw].sw->state;
	for (size_t k = 0; k < st->n_routes; k++) {
		const struct rsw_route *o = &st->routes[k];
		if (o->in_port == r->in_port && o->prefix.len == r->prefix.len &&
		    rsw_ip_eq(&o->prefix.ip, &r->prefix.ip)) {
			char ip[64];
			snprintf(err, errlen, "%s: its config already has POLICY_ROUTE %s|%s/%u (%s); "
				 "remove it to let TE pin that flow", z->sw[r->sw].name,
				 port_name(z, r->sw, r->in_port), rsw_ip_str(&r->prefix.ip, ip,
				 sizeof(ip)), r->prefix.len, o->origin);
			return -1;
		}
	}
	return 0;
}

static void route_line(FILE *f, const struct rsw_zone *z, const struct rsw_te_route *r)
{
	char ip[64], nh[64];
	fprintf(f, "  \"%s|%s/%u\": {nexthop: \"%s\"}\n", port_name(z, r->sw, r->in_port),
		rsw_ip_str(&r->prefix.ip, ip, sizeof(ip)), r->prefix.len,
		rsw_ip_str(&r->nexthop, nh, sizeof(nh)));
}

/* The switch's YAML config with TE's routes in its POLICY_ROUTE table (a block mapping, or a
 * new one at the end). */
static int yaml_switch(FILE *f, const char *text, const struct rsw_zone *z, unsigned sw,
		       const struct rsw_te_result *res, char *err, size_t errlen)
{
	const char *at = NULL;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, "POLICY_ROUTE:", 13)) {
			const char *rest = l + 13;
			while (*rest == ' ' || *rest == '\t')
				rest++;
			if (*rest && *rest != '\n' && *rest != '#') {
				snprintf(err, errlen, "%s: %s: POLICY_ROUTE is written inline; rocesw te "
					 "adds to a block mapping (one route a line)", z->sw[sw].name,
					 z->sw_config[sw]);
				return -1;
			}
			at = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l);
		}
	unsigned n = 0;
	for (unsigned k = 0; k < res->n_route; k++)
		n += res->route[k].sw == sw;
	size_t head = at ? (size_t)(at - text) : strlen(text);
	fwrite(text, 1, head, f);
	if (!at && n)
		fprintf(f, "%s# rocesw te: centralized TE's pinned paths (docs/te.md)\nPOLICY_ROUTE:\n",
			head && text[head - 1] != '\n' ? "\n" : "");
	for (unsigned k = 0; k < res->n_route; k++)
		if (res->route[k].sw == sw)
			route_line(f, z, &res->route[k]);
	fputs(text + head, f);
	return 0;
}

/* A SONiC config_db.json switch config: the routes merged into its POLICY_ROUTE object. */
static int json_switch(FILE *f, const char *text, const struct rsw_zone *z, unsigned sw,
		       const struct rsw_te_result *res, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	if (!doc || !json_is_object(doc)) {
		snprintf(err, errlen, "%s: line %d: %s", z->sw_config[sw], je.line, je.text);
		json_decref(doc);
		return -1;
	}
	json_t *pr = json_object_get(doc, "POLICY_ROUTE");
	if (!pr) {
		pr = json_object();
		json_object_set_new(doc, "POLICY_ROUTE", pr);
	}
	for (unsigned k = 0; k < res->n_route; k++) {
		const struct rsw_te_route *r = &res->route[k];
		if (r->sw != sw)
			continue;
		char key[160], ip[64], nh[64];
		snprintf(key, sizeof(key), "%s|%s/%u", port_name(z, sw, r->in_port),
			 rsw_ip_str(&r->prefix.ip, ip, sizeof(ip)), r->prefix.len);
		json_object_set_new(pr, key, json_pack("{s:s}", "nexthop",
						       rsw_ip_str(&r->nexthop, nh, sizeof(nh))));
	}
	int rc = json_dumpf(doc, f, JSON_INDENT(4) | JSON_SORT_KEYS);
	json_decref(doc);
	return rc;
}

static int write_text(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	int rc = rsw_file_write_whole(path, buf, len, 0666, err, errlen);
	free(buf);
	return rc;
}

static int rocesw_switch(const char *dir, const struct rsw_zone *z, unsigned sw,
			 const struct rsw_te_result *res, char *err, size_t errlen)
{
	for (unsigned k = 0; k < res->n_route; k++)
		if (res->route[k].sw == sw && clashes(z, &res->route[k], err, errlen) < 0)
			return -1;
	size_t len;
	char *text = read_all(z->sw_config[sw], &len);
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", z->sw_config[sw], strerror(errno));
		return -1;
	}
	char *out = NULL, path[4096];
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);
	int json = is_json(text);
	int rc = !f ? -1 : json ? json_switch(f, text, z, sw, res, err, errlen)
			       : yaml_switch(f, text, z, sw, res, err, errlen);
	free(text);
	if (f)
		fclose(f);
	if (rc < 0) {
		if (!f)
			snprintf(err, errlen, "out of memory");
		free(out);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.%s", dir, z->sw[sw].name, json ? "json" : "yaml");
	return write_text(path, out, out_len, err, errlen);
}

/* The zone file of the written switches: the same switches, hosts and links. */
static int zone_file(const char *dir, const char *zone_path, const struct rsw_zone *z, char *err,
		     size_t errlen)
{
	char *out = NULL, path[4096], a[160], b[160];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "# %s with the policy routes of rocesw te (docs/te.md)\nZONE: {name: %s}\n"
		"SWITCH:\n", zone_path, z->name);
	for (unsigned s = 0; s < z->n_sw; s++) {
		fprintf(f, "  %s: {config: %s.%s}\n", z->sw[s].name, z->sw[s].name,
			config_is_json(z->sw_config[s]) ? "json" : "yaml");
	}
	fprintf(f, "HOST:\n");
	for (unsigned h = 0; h < z->n_host; h++) {
		fprintf(f, "  %s: {", z->host[h].name);
		if (z->host[h].pcap)
			fprintf(f, "pcap: \"%s\"%s", z->host[h].pcap, z->host_devargs[h] ? ", " : "");
		if (z->host_devargs[h])
			fprintf(f, "devargs: \"%s\"", z->host_devargs[h]);
		fprintf(f, "}\n");
	}
	fprintf(f, "LINK:\n");
	for (unsigned i = 0; i < z->n_link; i++)
		fprintf(f, "  - {a: \"%s\", b: \"%s\", length: %um}\n",
			rsw_te_end_name(z, z->link[i].a, a, sizeof(a)),
			rsw_te_end_name(z, z->link[i].b, b, sizeof(b)), z->link_length_m[i]);
	fclose(f);
	snprintf(path, sizeof(path), "%s/zone.yaml", dir);
	return write_text(path, out, len, err, errlen);
}

/* SONiC: one L3 ACL table per ingress port holding a route, bound to that port, a rule per
 * destination redirecting to the next hop (ACL_RULE PACKET_ACTION "REDIRECT:IP|PORT"). */
static int sonic_switch(const char *path, const struct rsw_zone *z, unsigned sw,
			const struct rsw_te_result *res, char *err, size_t errlen)
{
	json_t *tables = json_object(), *rules = json_object();
	for (unsigned k = 0; k < res->n_route; k++) {
		const struct rsw_te_route *r = &res->route[k];
		if (r->sw != sw)
			continue;
		char tname[96], rname[96 + 4 + 64], ip[64], nh[64], dst[80], act[160];
		const char *in = port_name(z, sw, r->in_port);
		snprintf(tname, sizeof(tname), "TE_%s", in);
		if (!json_object_get(tables, tname))
			json_object_set_new(tables, tname, json_pack(
				"{s:s, s:s, s:s, s:[s]}", "policy_desc", "rocesw te: pinned paths",
				"type", "L3", "stage", "ingress", "ports", in));
		rsw_ip_str(&r->prefix.ip, ip, sizeof(ip));
		snprintf(dst, sizeof(dst), "%s/%u", ip, r->prefix.len);
		snprintf(rname, sizeof(rname), "%s|TO_%s", tname, ip);
		snprintf(act, sizeof(act), "REDIRECT:%s|%s", rsw_ip_str(&r->nexthop, nh, sizeof(nh)),
			 port_name(z, sw, r->out_port));
		json_object_set_new(rules, rname, json_pack("{s:s, s:s, s:s, s:s}", "PRIORITY",
							    "1000", "IP_TYPE", "IPV4ANY", "DST_IP",
							    dst, "PACKET_ACTION", act));
	}
	json_t *doc = json_pack("{s:o, s:o}", "ACL_TABLE", tables, "ACL_RULE", rules);
	int rc = rsw_json_write_whole(doc, path, JSON_INDENT(4) | JSON_SORT_KEYS, err, errlen);
	json_decref(doc);
	return rc;
}

/* EOS: per ingress port an ACL per destination, a class map on it, one PBR policy map with a
 * class per destination setting the next hop, applied on the port's input. */
static int eos_switch(const char *path, const struct rsw_zone *z, unsigned sw,
		      const struct rsw_te_result *res, char *err, size_t errlen)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(f, "! %s: rocesw te's pinned paths as EOS policy-based routing (docs/te.md)\n",
		z->sw[sw].name);
	for (unsigned pass = 0; pass < 3; pass++) {
		int last_port = -1;
		for (unsigned k = 0; k < res->n_route; k++) {
			const struct rsw_te_route *r = &res->route[k];
			if (r->sw != sw)
				continue;
			char ip[64], nh[64];
			const char *in = port_name(z, sw, r->in_port);
			rsw_ip_str(&r->prefix.ip, ip, sizeof(ip));
			if (pass == 0) {
				fprintf(f, "ip access-list TE-%s-%s\n   10 permit ip any %s/%u\n!\n", in,
					ip, ip, r->prefix.len);
				fprintf(f, "class-map type pbr match-any TE-%s-%s\n   match ip "
					"access-group TE-%s-%s\n!\n", in, ip, in, ip);
				continue;
			}
			if (pass == 1) {
				if ((int)r->in_port != last_port)
					fprintf(f, "%spolicy-map type pbr TE-%s\n",
						last_port >= 0 ? "!\n" : "", in);
				fprintf(f, "   class TE-%s-%s\n      set nexthop %s\n", in, ip,
					rsw_ip_str(&r->nexthop, nh, sizeof(nh)));
			} else if ((int)r->in_port != last_port) {
				fprintf(f, "interface %s\n   service-policy type pbr input TE-%s\n!\n",
					in, in);
			}
			last_port = r->in_port;
		}
		if (pass == 1 && last_port >= 0)
			fprintf(f, "!\n");
	}
	fclose(f);
	return write_text(path, out, len, err, errlen);
}

static int make_dir(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int rsw_te_write(const char *dir, const char *zone_path, const struct rsw_zone *z,
		 const struct rsw_te_result *res, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/sonic", dir);
	if (make_dir(dir, err, errlen) < 0 || make_dir(path, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/eos", dir);
	if (make_dir(path, err, errlen) < 0)
		return -1;
	for (unsigned s = 0; s < z->n_sw; s++) {
		if (rocesw_switch(dir, z, s, res, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s/sonic/%s.json", dir, z->sw[s].name);
		if (sonic_switch(path, z, s, res, err, errlen) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s/eos/%s.cfg", dir, z->sw[s].name);
		if (eos_switch(path, z, s, res, err, errlen) < 0)
			return -1;
	}
	return zone_file(dir, zone_path, z, err, errlen);
}

static int same_key(const struct rsw_te_route *a, const struct rsw_te_route *b)
{
	return a->sw == b->sw && a->in_port == b->in_port && a->dst == b->dst;
}

int rsw_te_txn(const struct rsw_te_result *from, const struct rsw_te_result *to, unsigned sw,
	       const char *origin, struct rsw_txn *txn)
{
	for (unsigned k = 0; from && k < from->n_route; k++) {
		const struct rsw_te_route *r = &from->route[k];
		int kept = 0;
		for (unsigned j = 0; !kept && j < to->n_route; j++)
			kept = same_key(r, &to->route[j]);
		if (r->sw != sw || kept)
			continue;
		struct rsw_table_write w = {.op = RSW_W_DELETE, .table = RSW_T_ROUTE};
		w.u.route.in_port = r->in_port;
		w.u.route.prefix = r->prefix;
		snprintf(w.u.route.origin, sizeof(w.u.route.origin), "%s", origin);
		if (rsw_txn_add(txn, &w) < 0)
			return -1;
	}
	for (unsigned k = 0; k < to->n_route; k++) {
		const struct rsw_te_route *r = &to->route[k];
		if (r->sw != sw)
			continue;
		struct rsw_table_write w = {.op = RSW_W_SET, .table = RSW_T_ROUTE};
		w.u.route.in_port = r->in_port;
		w.u.route.prefix = r->prefix;
		w.u.route.target = RSW_TGT_NEXTHOP;
		w.u.route.nexthop = r->nexthop;
		snprintf(w.u.route.origin, sizeof(w.u.route.origin), "%s", origin);
		if (rsw_txn_add(txn, &w) < 0)
			return -1;
	}
	return 0;
}
