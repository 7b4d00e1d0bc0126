#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"
#include "config_roceswd.h"

void rsw_daemon_cfg_defaults(struct rsw_daemon_cfg *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->eal_args, sizeof(d->eal_args), "--no-huge -m 1024 --no-pci -l 0-1");
	snprintf(d->control_socket, sizeof(d->control_socket), "/run/rocesw/dataplane.sock");
	snprintf(d->metrics_address, sizeof(d->metrics_address), "127.0.0.1");
	d->metrics_timeout = 10;
}

/* A text field into a buffer of len bytes: non-empty and fitting. */
static int copy(struct cc *c, const struct rsw_fval *f, const char *name, char *out, size_t len)
{
	if (!f->v)
		return 0;
	if (!*f->s || strlen(f->s) >= len)
		return ydoc_error(&c->y, f->v, "ROCESWD|GLOBAL",
				  "%s: expected a non-empty string shorter than %zu bytes", name, len);
	memcpy(out, f->s, strlen(f->s) + 1);
	return 0;
}

int rsw_daemon_cfg_parse(struct cc *c, yaml_node_t *t, struct rsw_daemon_cfg *d)
{
	if (!t)
		return 0;
	unsigned before = c->y.n_err;
	if (rsw_cc_want_map(c, t, "ROCESWD") < 0)
		return -1;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		if (!ydoc_str(k) || strcmp(ydoc_str(k), "GLOBAL")) {
			ydoc_error(&c->y, k, "ROCESWD", "expected the one key 'GLOBAL'");
			continue;
		}
		/* the schema checks names, types and ranges (config_schema.c's roceswd_fields) */
		struct rsw_fval f[RD_USER + 1];
		rsw_cc_fields(c, rsw_schema_tables[T_ROCESWD].fields, "ROCESWD|GLOBAL", k, v, f);
		copy(c, &f[RD_EAL_ARGS], "eal_args", d->eal_args, sizeof(d->eal_args));
		copy(c, &f[RD_CONTROL_SOCKET], "control_socket", d->control_socket,
		     sizeof(d->control_socket));
		copy(c, &f[RD_CONTROL_GROUP], "control_group", d->control_group,
		     sizeof(d->control_group));
		copy(c, &f[RD_DATAPLANE], "dataplane", d->dataplane, sizeof(d->dataplane));
		copy(c, &f[RD_CONTROL_RO_GROUP], "control_readonly_group", d->control_ro_group,
		     sizeof(d->control_ro_group));
		copy(c, &f[RD_USER], "user", d->user, sizeof(d->user));
		if (f[RD_METRICS_PORT].v)
			d->metrics_port = (unsigned)f[RD_METRICS_PORT].u;
		if (f[RD_METRICS_TIMEOUT].v)
			d->metrics_timeout = (unsigned)f[RD_METRICS_TIMEOUT].u;
		unsigned char a[16];
		if (copy(c, &f[RD_METRICS_ADDRESS], "metrics_address", d->metrics_address,
			 sizeof(d->metrics_address)) == 0 && f[RD_METRICS_ADDRESS].v &&
		    inet_pton(AF_INET, d->metrics_address, a) != 1 &&
		    inet_pton(AF_INET6, d->metrics_address, a) != 1)
			ydoc_error(&c->y, f[RD_METRICS_ADDRESS].v, "ROCESWD|GLOBAL",
				   "metrics_address: expected a numeric IPv4 or IPv6 address, got '%s'",
				   d->metrics_address);
	}
	return c->y.n_err != before ? -1 : 0;
}

int rsw_config_roceswd(const char *path, struct rsw_daemon_cfg *d, char *err, size_t errlen)
{
	rsw_daemon_cfg_defaults(d);
	struct cc *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (ydoc_load(&c->y, path, err, errlen) < 0) {
		free(c);
		return -1;
	}
	c->y.collect = 1; /* every error of the table at once */
	yaml_node_t *root = ydoc_root(&c->y), *t = NULL;
	if (root->type == YAML_MAPPING_NODE)
		YDOC_FOREACH_PAIR(&c->y, root, pr) {
			const char *k = ydoc_str(ydoc_node(&c->y, pr->key));
			if (k && !strcmp(k, "ROCESWD"))
				t = ydoc_node(&c->y, pr->value);
		}
	int rc = rsw_daemon_cfg_parse(c, t, d);
	if (c->y.n_err) {
		ydoc_errors_flush(&c->y);
		rc = -1;
	}
	ydoc_free(&c->y);
	free(c);
	return rc;
}
