/* `reload` of a whole zone (docs/control.md): every switch's config, each as the difference to
 * that switch's running tables, in one zone-wide transaction. Two phases: every switch's config is
 * compiled, diffed and its new tables built (rsw_switch_prepare) before any is swapped in; only
 * when all are ready are they published together and the workers waited for once. A switch that
 * refuses refuses the whole reload: no switch changes, and the answer names every refused switch
 * with every one of its errors. A switch whose tables would not change gets no transaction. */
#include <stdlib.h>
#include <string.h>

#include <rte_rcu_qsbr.h>

#include "dataplane/config/config.h"
#include "dataplane/tables/state_diff.h"
#include "dp_ctl.h"
#include "dp_zone.h"

struct sw_reload {
	unsigned file;              /* index in "files" and the descriptors */
	struct rsw_txn *diff;
	struct rsw_switch_prep prep;
	int prepared;
};

/* err's lines (a config's errors are one a line), each as "SWITCH: LINE" into the answer's text
 * and its "errors" object. */
static void refuse(json_t *errors, char *msg, size_t msglen, const char *sw, const char *err)
{
	json_t *list = json_array();
	const char *p = err;
	do {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		json_array_append_new(list, json_stringn(p, n));
		size_t used = strlen(msg);
		snprintf(msg + used, msglen - used, "\n%s: %.*s", sw, (int)n, p);
		p = nl ? nl + 1 : NULL;
	} while (p);
	json_object_set_new(errors, sw, list);
}

/* "switches": [NAME, ...] naming every switch of the zone once, "files" the config of each. */
static int match_switches(const struct rsw_dp_zone *z, json_t *req, struct sw_reload *r,
			  char *err, size_t errlen)
{
	json_t *names = json_object_get(req, "switches"), *files = json_object_get(req, "files"), *v;
	size_t i;
	if (!json_is_array(names) || !json_is_array(files) ||
	    json_array_size(names) != json_array_size(files)) {
		snprintf(err, errlen, "reload: a zone's reload gives \"switches\": [NAME, ...] and "
			 "\"files\": [its config, ...] in the same order (docs/control.md), or names one "
			 "switch (\"switch\": NAME) to reload that one");
		return -1;
	}
	for (unsigned s = 0; s < z->n_sw; s++)
		r[s].file = (unsigned)-1;
	json_array_foreach(names, i, v) {
		const char *n = json_string_value(v);
		unsigned s = 0;
		while (n && s < z->n_sw && strcmp(z->dp[s]->name, n))
			s++;
		if (!n || s == z->n_sw) {
			snprintf(err, errlen, "reload refused, no switch changed: switch '%.64s' is not in "
				 "zone %s: adding a switch is a topology change, restart the dataplane",
				 n ? n : "?", z->name);
			return -1;
		}
		if (r[s].file != (unsigned)-1) {
			snprintf(err, errlen, "reload: switch %s named twice", n);
			return -1;
		}
		r[s].file = (unsigned)i;
	}
	for (unsigned s = 0; s < z->n_sw; s++)
		if (r[s].file == (unsigned)-1) {
			snprintf(err, errlen, "reload refused, no switch changed: switch %s of zone %s has "
				 "no config in the reload: removing a switch is a topology change, restart "
				 "the dataplane", z->dp[s]->name, z->name);
			return -1;
		}
	return 0;
}

/* The zone's links run at the speed of the ports they were built with: a linked port's new
 * speed is a change of the link, which needs a restart (all its errors, one a line). */
static int link_speeds(const struct rsw_dp_zone *z, unsigned s, const struct rsw_state *next,
		       char *err, size_t errlen)
{
	const struct rsw_zone *m = z->model;
	size_t o = 0;
	for (unsigned i = 0; i < m->n_link; i++) {
		const struct rsw_topo_end *ends[2] = {&m->link[i].a, &m->link[i].b};
		for (unsigned k = 0; k < 2; k++) {
			if (ends[k]->sw != (int)s || o >= errlen)
				continue;
			const struct rsw_port_cfg *pc = &next->ports[ends[k]->idx];
			if (pc->speed_mbps != m->link[i].speed_mbps)
				o += (size_t)snprintf(err + o, errlen - o, "%sPORT|%s: speed %u Mb/s, "
						      "but its LINK runs at %u: changing a link "
						      "needs a restart", o ? "\n" : "", pc->name,
						      pc->speed_mbps, m->link[i].speed_mbps);
		}
	}
	return o ? -1 : 0;
}

/* Phase 1 for switch s: its config compiled, diffed with its running state and checked against
 * its links; nothing changes. 0, or -1 with the reason in e. */
static int check_switch(struct rsw_ctl *c, unsigned s, struct sw_reload *r, const char *name,
			char *e, size_t elen)
{
	struct rsw_dp_zone *z = c->zone;
	struct rsw_txn *file = rsw_txn_new();
	struct rsw_state *next = NULL;
	r->diff = rsw_txn_new();
	const struct rsw_state *run = z->dp[s]->sw->state;
	int ok = file && r->diff;
	if (!ok)
		snprintf(e, elen, "out of memory");
	ok = ok && rsw_config_compile_fd(c->req_fd[r->file], name, file, e, elen) == 0;
	if (ok)
		rsw_ctl_keep_run_params(file, run);
	ok = ok && (next = rsw_state_from_txn(file, e, elen)) != NULL &&
	     rsw_state_diff(run, next, r->diff, e, elen) == 0 &&
	     link_speeds(z, s, next, e, elen) == 0;
	if (ok)
		e[0] = 0;
	else if (!e[0])
		snprintf(e, elen, "refused");
	rsw_state_free(next);
	rsw_txn_free(file);
	return ok ? 0 : -1;
}

/* Phase 2: the new tables of every changed switch built (each keeps its lock). Returns how many
 * switches refused. */
static unsigned prepare_all(struct rsw_dp_zone *z, struct sw_reload *r, json_t *errors, char *msg,
			    size_t msglen)
{
	unsigned refused = 0;
	for (unsigned s = 0; !refused && s < z->n_sw; s++) {
		char e[4096];
		if (!rsw_txn_len(r[s].diff))
			continue;
		if (rsw_switch_prepare(z->dp[s]->sw, r[s].diff, &r[s].prep, e, sizeof(e)) < 0) {
			refused++;
			refuse(errors, msg, msglen, z->dp[s]->name, e);
		} else {
			r[s].prepared = 1;
		}
	}
	return refused;
}

/* Phase 3: all swapped in, the workers waited for once, the old tables retired. Returns every
 * switch's generation and writes. */
static json_t *publish_all(struct rsw_ctl *c, struct sw_reload *r, json_t *files)
{
	struct rsw_dp_zone *z = c->zone;
	for (unsigned s = 0; s < z->n_sw; s++)
		if (r[s].prepared)
			rsw_switch_publish(z->dp[s]->sw, &r[s].prep);
	if (z->qsbr)
		rsw_switch_wait_readers(z->qsbr);
	json_t *sws = json_object();
	size_t writes = 0;
	for (unsigned s = 0; s < z->n_sw; s++) {
		if (r[s].prepared)
			rsw_switch_release(z->dp[s]->sw, &r[s].prep);
		const char *name = json_string_value(json_array_get(files, r[s].file));
		char *copy = strdup(name);
		if (copy) {
			free(z->config_owned[s]);
			z->config[s] = z->config_owned[s] = copy;
		}
		writes += rsw_txn_len(r[s].diff);
		json_object_set_new(sws, z->dp[s]->name,
				    json_pack("{s:I, s:I}", "generation",
					      (json_int_t)z->dp[s]->sw->generation, "writes",
					      (json_int_t)rsw_txn_len(r[s].diff)));
	}
	c->reloads++;
	return json_pack("{s:s, s:I, s:o}", "zone", z->name, "writes", (json_int_t)writes,
			 "switches", sws);
}

/* The transaction's three phases, all switches or none. */
json_t *rsw_dp_zone_reload(struct rsw_ctl *c, json_t *req, char *err, size_t errlen)
{
	struct rsw_dp_zone *z = c->zone;
	struct sw_reload *r = calloc(z->n_sw, sizeof(*r));
	json_t *errors = json_object(), *result = NULL, *files = json_object_get(req, "files");
	char *msg = calloc(1, errlen);
	unsigned refused = 0;
	if (!r || !errors || !msg) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (match_switches(z, req, r, err, errlen) < 0)
		goto out;
	/* phase 1: every switch checked, all errors collected */
	for (unsigned s = 0; s < z->n_sw; s++) {
		char e[4096] = "";
		const char *name = json_string_value(json_array_get(files, r[s].file));
		if (check_switch(c, s, &r[s], name, e, sizeof(e)) < 0) {
			refused++;
			refuse(errors, msg, errlen, z->dp[s]->name, e);
		}
	}
	if (!refused)
		refused = prepare_all(z, r, errors, msg, errlen);
	if (refused) {
		for (unsigned s = 0; s < z->n_sw; s++)
			if (r[s].prepared)
				rsw_switch_abort(z->dp[s]->sw, &r[s].prep);
		snprintf(err, errlen, "reload refused, no switch changed: %u of %u switches refused "
			 "(one line per error)%s", refused, z->n_sw, msg);
		c->req_errors = errors;
		errors = NULL;
		goto out;
	}
	result = publish_all(c, r, files);
out:
	for (unsigned s = 0; r && s < z->n_sw; s++)
		rsw_txn_free(r[s].diff);
	free(r);
	free(msg);
	json_decref(errors);
	return result;
}
