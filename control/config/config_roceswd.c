#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "config_roceswd.h"

void rsw_daemon_cfg_defaults(struct rsw_daemon_cfg *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->eal_args, sizeof(d->eal_args), "--no-huge -m 1024 --no-pci -l 0-1");
	snprintf(d->control_socket, sizeof(d->control_socket), "/run/rocesw/dataplane.sock");
	snprintf(d->metrics_address, sizeof(d->metrics_address), "127.0.0.1");
	d->metrics_timeout = 10;
}

static int number(struct ydoc *y, yaml_node_t *v, const char *key, unsigned long max,
		  const char *what, unsigned *out)
{
	const char *s = ydoc_str(v);
	char *end;
	unsigned long n = s ? strtoul(s, &end, 10) : 0;
	if (!s || !*s || *end || n == 0 || n > max)
		return ydoc_error(y, v, key, "expected %s 1-%lu, got '%s'", what, max, s ? s : "?");
	*out = (unsigned)n;
	return 0;
}

static int copy(struct ydoc *y, yaml_node_t *v, const char *key, char *out, size_t len)
{
	const char *s = ydoc_str(v);
	if (!s || !*s || strlen(s) >= len)
		return ydoc_error(y, v, key, "expected a non-empty string shorter than %zu bytes", len);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

int rsw_daemon_cfg_parse(struct ydoc *y, yaml_node_t *t, struct rsw_daemon_cfg *d)
{
	if (!t)
		return 0;
	if (t->type != YAML_MAPPING_NODE)
		return ydoc_error(y, t, "ROCESWD", "expected a mapping with the one key GLOBAL");
	YDOC_FOREACH_PAIR(y, t, pr) {
		yaml_node_t *k = ydoc_node(y, pr->key), *v = ydoc_node(y, pr->value);
		if (!ydoc_str(k) || strcmp(ydoc_str(k), "GLOBAL"))
			return ydoc_error(y, k, "ROCESWD", "expected the one key 'GLOBAL'");
		if (v->type != YAML_MAPPING_NODE)
			return ydoc_error(y, v, "ROCESWD|GLOBAL", "expected a mapping of fields");
		YDOC_FOREACH_PAIR(y, v, f) {
			yaml_node_t *fk = ydoc_node(y, f->key), *fv = ydoc_node(y, f->value);
			const char *name = ydoc_str(fk) ? ydoc_str(fk) : "?";
			int rc;
			if (!strcmp(name, "eal_args"))
				rc = copy(y, fv, "ROCESWD|GLOBAL.eal_args", d->eal_args, sizeof(d->eal_args));
			else if (!strcmp(name, "control_socket"))
				rc = copy(y, fv, "ROCESWD|GLOBAL.control_socket", d->control_socket,
					  sizeof(d->control_socket));
			else if (!strcmp(name, "control_group"))
				rc = copy(y, fv, "ROCESWD|GLOBAL.control_group", d->control_group,
					  sizeof(d->control_group));
			else if (!strcmp(name, "dataplane"))
				rc = copy(y, fv, "ROCESWD|GLOBAL.dataplane", d->dataplane,
					  sizeof(d->dataplane));
			else if (!strcmp(name, "metrics_port"))
				rc = number(y, fv, "ROCESWD|GLOBAL.metrics_port", 65535, "a TCP port",
					    &d->metrics_port);
			else if (!strcmp(name, "metrics_timeout"))
				rc = number(y, fv, "ROCESWD|GLOBAL.metrics_timeout", 3600, "seconds",
					    &d->metrics_timeout);
			else if (!strcmp(name, "metrics_address")) {
				unsigned char a[16];
				rc = copy(y, fv, "ROCESWD|GLOBAL.metrics_address", d->metrics_address,
					  sizeof(d->metrics_address));
				if (rc == 0 && inet_pton(AF_INET, d->metrics_address, a) != 1 &&
				    inet_pton(AF_INET6, d->metrics_address, a) != 1)
					return ydoc_error(y, fv, "ROCESWD|GLOBAL.metrics_address",
							  "expected a numeric IPv4 or IPv6 address, got '%s'",
							  d->metrics_address);
			} else
				return ydoc_error(y, fk, "ROCESWD|GLOBAL",
						  "unknown field '%s' (expected eal_args, control_socket, "
						  "control_group, metrics_port, metrics_address, "
						  "metrics_timeout, dataplane)", name);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

int rsw_config_roceswd(const char *path, struct rsw_daemon_cfg *d, char *err, size_t errlen)
{
	struct ydoc y;
	rsw_daemon_cfg_defaults(d);
	if (ydoc_load(&y, path, err, errlen) < 0)
		return -1;
	yaml_node_t *root = ydoc_root(&y), *t = NULL;
	if (root->type == YAML_MAPPING_NODE)
		YDOC_FOREACH_PAIR(&y, root, pr) {
			const char *k = ydoc_str(ydoc_node(&y, pr->key));
			if (k && !strcmp(k, "ROCESWD"))
				t = ydoc_node(&y, pr->value);
		}
	int rc = rsw_daemon_cfg_parse(&y, t, d);
	ydoc_free(&y);
	return rc;
}
