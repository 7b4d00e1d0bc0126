/* One control socket for every switch of a zone: a request names its switch ("switch": NAME);
 * without one, a zone answers what concerns it as a whole (hello, the socket's own counters,
 * every switch's counters, a reload of every switch: dp_zone_reload.c) and refuses the rest with
 * the list of switches. A single switch
 * takes requests with no name, or its own hostname. */
#include <string.h>

#include "dp_ctl.h"
#include "dp_stats.h"
#include "dp_zone.h"

static void switch_list(const struct rsw_dp_zone *z, char *out, size_t len)
{
	out[0] = 0;
	for (unsigned s = 0; s < z->n_sw; s++)
		snprintf(out + strlen(out), len - strlen(out), "%s%s", s ? ", " : "", z->dp[s]->name);
}

static json_t *zone_hello(const struct rsw_dp_zone *z)
{
	json_t *sw = json_object();
	for (unsigned s = 0; s < z->n_sw; s++)
		json_object_set_new(sw, z->dp[s]->name,
				    json_pack("{s:I}", "generation", (json_int_t)z->dp[s]->sw->generation));
	return json_pack("{s:i, s:s, s:s, s:o}", "protocol", RSW_CTL_PROTOCOL, "program",
			 "rocesw-dataplane", "zone", z->name, "switches", sw);
}

/* A zone's reload, logged as each switch's change: its generation, or the refusal. */
static json_t *zone_reload(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	struct rsw_dp_zone *z = c->zone;
	json_t *r = rsw_ctl_check_files(c, "reload", req, err, errlen) < 0
			    ? NULL
			    : rsw_dp_zone_reload(c, req, err, errlen);
	for (unsigned s = 0; s < z->n_sw; s++) {
		c->dp = z->dp[s];
		rsw_ctl_log_change(c, "reload", req, r, err);
	}
	c->dp = z->dp[0];
	return r;
}

json_t *rsw_ctl_dispatch(struct rsw_ctl *c, const char *op, json_t *req, char *err,
			 size_t errlen)
{
	struct rsw_dp_zone *z = c->zone;
	json_t *js = json_object_get(req, "switch");
	if (js && !json_is_string(js)) {
		snprintf(err, errlen, "\"switch\": expected a switch name");
		return NULL;
	}
	const char *name = json_string_value(js);
	char sw_name[RSW_NAME_MAX];
	if (!name && z && z->model) {
		/* "port": "SWITCH|PORT", the zone's notation (rocesw set port rtsw1|Ethernet0 down) */
		static const char *const keys[] = {"port", "in_port"};
		for (unsigned k = 0; k < 2 && !name; k++) {
			const char *v = json_string_value(json_object_get(req, keys[k]));
			const char *bar = v ? strchr(v, '|') : NULL;
			if (!bar || (size_t)(bar - v) >= sizeof(sw_name))
				continue;
			memcpy(sw_name, v, (size_t)(bar - v));
			sw_name[bar - v] = 0;
			name = sw_name;
			json_object_set_new(req, keys[k], json_string(bar + 1));
		}
	}
	const char *what = json_string_value(json_object_get(req, "what"));
	if (z && !strcmp(op, "show") && what && !strcmp(what, "deadlock"))
		return rsw_dp_zone_deadlock_json(z, err, errlen); /* a zone's cycles, whatever switch */
	if (!z || !z->model) {
		const char *host = c->dp->sw->state->sw.hostname;
		if (name && strcmp(name, host)) {
			snprintf(err, errlen, "no switch '%.64s': this dataplane runs one switch (%s), "
				 "not a zone", name, host[0] ? host : "no hostname");
			return NULL;
		}
		return rsw_ctl_handle(c, op, req, err, errlen);
	}
	char list[1024];
	switch_list(z, list, sizeof(list));
	if (!name) {
		if (!strcmp(op, "hello"))
			return zone_hello(z);
		if (!strcmp(op, "show") && what && !strcmp(what, "control"))
			return rsw_ctl_handle(c, op, req, err, errlen);
		if (!strcmp(op, "show") && what && !strcmp(what, "counters"))
			return rsw_dp_zone_counters_json(z);
		if (!strcmp(op, "reload"))
			return zone_reload(c, req, err, errlen);
		if (!strncmp(op, "trace_", 6)) /* the workers' buffers serve every switch */
			return rsw_ctl_handle(c, op, req, err, errlen);
		snprintf(err, errlen, "%.32s: this dataplane runs zone %s: name a switch "
			 "(\"switch\": one of %s)", op, z->name, list);
		return NULL;
	}
	unsigned s = 0;
	while (s < z->n_sw && strcmp(z->dp[s]->name, name))
		s++;
	if (s == z->n_sw) {
		snprintf(err, errlen, "no switch '%.64s' in zone %s (switches: %s)", name, z->name,
			 list);
		return NULL;
	}
	c->dp = z->dp[s];
	c->config_path = z->config[s];
	json_t *r = rsw_ctl_handle(c, op, req, err, errlen);
	if (r && c->config_path != z->config[s]) {
		/* a reload: the switch's config is the file it applied */
		free(z->config_owned[s]);
		z->config[s] = z->config_owned[s] = strdup(c->config_path);
	}
	if (r && json_is_object(r))
		json_object_set_new(r, "switch", json_string(name));
	c->dp = z->dp[0];
	c->config_path = z->config[0];
	return r;
}
