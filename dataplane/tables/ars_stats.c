/* ARS counters read and written out for the front ends (docs/ars.md, Counters). */
#include "ars_stats.h"
#include "fib.h"

int rsw_ars_stats_get(const struct rsw_fib_group *g, uint64_t v[RSW_ARS_STATS])
{
	const struct rsw_ars_group *a = g->ars;
	_Static_assert(sizeof(struct rsw_ars_stats) == RSW_ARS_STATS * sizeof(uint64_t),
		       "rsw_ars_stats is the counters in rsw_ars_stat_names' order");
	const uint64_t *src = a ? (const uint64_t *)&a->st : NULL;
	for (unsigned i = 0; i < RSW_ARS_STATS; i++)
		v[i] = src ? __atomic_load_n(&src[i], __ATOMIC_RELAXED) : 0;
	return a ? 0 : -1;
}

json_t *rsw_ars_group_json(const struct rsw_fib_group *g)
{
	uint64_t v[RSW_ARS_STATS];
	if (rsw_ars_stats_get(g, v))
		return NULL;
	const struct rsw_ars_obj *o = &g->ars->cfg;
	json_t *j = json_object();
	json_object_set_new(j, "object", json_string(o->name));
	json_object_set_new(j, "mode", json_string(rsw_ars_mode_name(o->mode)));
	json_object_set_new(j, "flowlet_idle_time", json_integer(o->idle_us));
	json_object_set_new(j, "max_flows", json_integer(o->max_flows));
	for (unsigned i = 0; i < RSW_ARS_STATS; i++)
		json_object_set_new(j, rsw_ars_stat_names[i], json_integer((json_int_t)v[i]));
	return j;
}

json_t *rsw_ars_groups_json(const struct rsw_fib *fib)
{
	if (!fib->ars)
		return NULL;
	json_t *a = json_array();
	for (uint32_t i = 0; i < fib->n_groups; i++) {
		json_t *j = rsw_ars_group_json(&fib->groups[i]);
		if (!j)
			continue;
		json_t *o = json_pack("{s:s}", "group", fib->groups[i].name);
		json_object_update(o, j);
		json_decref(j);
		json_array_append_new(a, o);
	}
	return a;
}
