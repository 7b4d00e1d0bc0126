/* ARS_PROFILE and ARS_OBJECT (SONiC's ARS tables; docs/ars.md) into the switch's profile and
 * the objects NEXTHOP_GROUP.ars_object names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_cc.h"

/* assign_mode's words, in the schema's order: SONiC/SAI's, then FBOSS's switchingMode */
static const uint8_t mode_of_word[] = {
	RSW_ARS_FLOWLET_QUALITY, RSW_ARS_FLOWLET_RANDOM, RSW_ARS_PER_PACKET_QUALITY,
	RSW_ARS_PER_PACKET_RANDOM, RSW_ARS_FIXED, RSW_ARS_FLOWLET_QUALITY,
	RSW_ARS_PER_PACKET_QUALITY, RSW_ARS_PER_PACKET_RANDOM, RSW_ARS_FIXED,
};

static void parse_profile(struct cc *c, yaml_node_t *t)
{
	struct rsw_ars_profile *p = &c->sw.ars;
	int n = 0;
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		char name[RSW_NAME_MAX], key[96];
		if (rsw_cc_get_name(c, k, "ARS_PROFILE", name) < 0)
			continue;
		snprintf(key, sizeof(key), "ARS_PROFILE|%s", name);
		if (n++) {
			ydoc_error(&c->y, k, key, "a switch has one ARS profile (SAI_SWITCH_ATTR_"
						 "ARS_PROFILE); '%s' is already it", p->name);
			continue;
		}
		struct rsw_fval f[AP_V6 + 1];
		if (rsw_cc_fields(c, rsw_schema_tables[T_ARSPROF].fields, key, k, v, f))
			continue;
		memset(p, 0, sizeof(*p));
		p->present = 1;
		strcpy(p->name, name);
		p->sample_us = f[AP_SAMPLE].v ? (uint32_t)f[AP_SAMPLE].u : 16;
		p->seed = f[AP_SEED].v ? (uint32_t)f[AP_SEED].u : 0;
		p->load_min = f[AP_PAST_MIN].v ? f[AP_PAST_MIN].u : 0;
		p->load_max = f[AP_PAST_MAX].v ? f[AP_PAST_MAX].u : 200000;
		p->load_exp = (uint8_t)(f[AP_PAST_WEIGHT].v ? f[AP_PAST_WEIGHT].u : 2);
		p->queue_min = f[AP_FUT_MIN].v ? f[AP_FUT_MIN].u : 0;
		p->queue_max = f[AP_FUT_MAX].v ? f[AP_FUT_MAX].u : 1048576;
		p->queue_exp = (uint8_t)(f[AP_FUT_WEIGHT].v ? f[AP_FUT_WEIGHT].u : 2);
		p->load_weight = (uint8_t)(f[AP_LOAD_PCT].v ? f[AP_LOAD_PCT].u : 50);
		p->queue_weight = (uint8_t)(f[AP_QUEUE_PCT].v ? f[AP_QUEUE_PCT].u : 50);
		p->ipv4 = f[AP_V4].v ? (uint8_t)f[AP_V4].b : 1;
		p->ipv6 = f[AP_V6].v ? (uint8_t)f[AP_V6].b : 1;
		if (p->load_min >= p->load_max)
			ydoc_error(&c->y, f[AP_PAST_MAX].v ? f[AP_PAST_MAX].v : k, key,
				   "past_load_min_value (%llu) must be below past_load_max_value "
				   "(%llu): the bands lie between them",
				   (unsigned long long)p->load_min, (unsigned long long)p->load_max);
		if (p->queue_min >= p->queue_max)
			ydoc_error(&c->y, f[AP_FUT_MAX].v ? f[AP_FUT_MAX].v : k, key,
				   "future_load_min_value (%llu) must be below future_load_max_value "
				   "(%llu): the bands lie between them",
				   (unsigned long long)p->queue_min, (unsigned long long)p->queue_max);
		if (!p->load_weight && !p->queue_weight)
			ydoc_error(&c->y, k, key, "port_load_weight and port_queue_weight are both 0: "
						  "quality would not depend on anything");
	}
}

static void parse_objects(struct cc *c, yaml_node_t *t)
{
	YDOC_FOREACH_PAIR(&c->y, t, pr) {
		yaml_node_t *k = ydoc_node(&c->y, pr->key), *v = ydoc_node(&c->y, pr->value);
		struct rsw_ars_obj o = {0};
		char key[96];
		if (rsw_cc_get_name(c, k, "ARS_OBJECT", o.name) < 0)
			continue;
		snprintf(key, sizeof(key), "ARS_OBJECT|%s", o.name);
		struct rsw_fval f[AO_DPORT + 1];
		if (rsw_cc_fields(c, rsw_schema_tables[T_ARSOBJ].fields, key, k, v, f))
			continue;
		o.mode = f[AO_MODE].v ? mode_of_word[f[AO_MODE].word - 1] : RSW_ARS_FLOWLET_QUALITY;
		o.idle_us = f[AO_IDLE].v ? (uint32_t)f[AO_IDLE].u : 256;
		o.max_flows = f[AO_MAXFLOWS].v ? (uint32_t)f[AO_MAXFLOWS].u : 512;
		if (f[AO_DPORT].v) {
			o.match_udp = 1;
			o.match_dport = (uint16_t)f[AO_DPORT].u;
		}
		if (!c->sw.ars.present) {
			ydoc_error(&c->y, k, key, "needs an ARS_PROFILE: the switch's profile says "
						  "how port quality is measured");
			continue;
		}
		struct rsw_ars_obj *a = realloc(c->ars, (c->n_ars + 1) * sizeof(*a));
		if (!a) {
			ydoc_error(&c->y, k, key, "out of memory");
			return;
		}
		c->ars = a;
		c->ars[c->n_ars++] = o;
	}
}

void rsw_cc_ars(struct cc *c)
{
	if (c->tables[T_ARSPROF] && rsw_cc_want_map(c, c->tables[T_ARSPROF], "ARS_PROFILE") == 0)
		parse_profile(c, c->tables[T_ARSPROF]);
	if (c->tables[T_ARSOBJ] && rsw_cc_want_map(c, c->tables[T_ARSOBJ], "ARS_OBJECT") == 0)
		parse_objects(c, c->tables[T_ARSOBJ]);
}

int rsw_cc_ars_object(struct cc *c, yaml_node_t *v, const char *key, struct rsw_ars_obj *out)
{
	const char *name = ydoc_str(v);
	if (name && !strcmp(name, "none"))
		return 0;
	for (unsigned i = 0; name && i < c->n_ars; i++)
		if (!strcmp(c->ars[i].name, name)) {
			*out = c->ars[i];
			return 0;
		}
	return ydoc_error(&c->y, v, key, "ars_object: no ARS_OBJECT named '%s'", name ? name : "?");
}
