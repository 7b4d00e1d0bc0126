/* Zone configs: several switches (each its own switch config), hosts and the links between them,
 * compiled into a topology (dataplane/topo/topo.h) and a switch each. docs/replay.md describes
 * the format. */
#ifndef RSW_ZONE_H
#define RSW_ZONE_H

#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include <rte_rcu_qsbr.h>

#include "dataplane/hash/hash_policy.h"
#include "dataplane/topo/topo.h"

#define RSW_ZONE_MAX_SWITCHES 1024
#define RSW_ZONE_MAX_HOSTS 16384
#define RSW_ZONE_MAX_LINKS 32768

struct rsw_zone {
	char *name;
	unsigned n_sw, n_host, n_link;
	struct rsw_topo_switch sw[RSW_ZONE_MAX_SWITCHES];
	char *sw_config[RSW_ZONE_MAX_SWITCHES];   /* resolved path of each switch's config */
	struct rsw_topo_host host[RSW_ZONE_MAX_HOSTS];
	char *host_devargs[RSW_ZONE_MAX_HOSTS];   /* live: the DPDK device of the host's link, or NULL */
	struct rsw_topo_link link[RSW_ZONE_MAX_LINKS];
	uint32_t link_length_m[RSW_ZONE_MAX_LINKS];
};

/* How switches are compiled for a run. */
struct rsw_zone_opts {
	uint64_t ecn_seed;                     /* switch i gets ecn_seed + i */
	const struct rsw_hash_policy *policy;  /* replaces every hash policy, or NULL */
	/* per switch (by name): the policy replacing that switch's hash policies instead of policy,
	 * or NULL for policy (the hash lab's --switch-hash) */
	const struct rsw_hash_policy *(*switch_policy)(void *ctx, const char *name);
	void *switch_policy_ctx;
	FILE *warnings;                        /* where to say what is odd but allowed, or NULL */
	struct rte_rcu_qsbr *qsbr;             /* live: the workers' RCU state, or NULL */
};

/* 1 if path is a zone config (it has a SWITCH table), 0 if not, -1 with a message if it cannot be
 * read. */
int rsw_zone_detect(const char *path, char *err, size_t errlen);

/* Loads a zone config and compiles its switches (EAL must be up). Returns -1 with
 * "FILE:LINE: KEY: ..." or the failing switch config's error in err. */
int rsw_zone_load(const char *path, const struct rsw_zone_opts *o, struct rsw_zone *z, char *err,
		  size_t errlen);
void rsw_zone_free(struct rsw_zone *z);
/* The resolved config path of every switch of a zone config, without compiling anything (no
 * EAL needed): *n paths in *out, each and the array to be freed. Errors in the zone are left to
 * rsw_zone_load. Returns 0, or -1 with a message. */
int rsw_zone_switch_configs(const char *path, char ***out, unsigned *n, char *err, size_t errlen);

/* One switch from a switch config, as a one-switch zone with no links. */
int rsw_zone_single(const char *path, const struct rsw_zone_opts *o, struct rsw_zone *z,
		    char *err, size_t errlen);

/* Index of a host by name, or -1. */
int rsw_zone_host_index(const struct rsw_zone *z, const char *name);
/* Switch and port of "SWITCH|PORT" (or "PORT" in a one-switch zone). Returns 0 or -1. */
int rsw_zone_port(const struct rsw_zone *z, const char *spec, unsigned *sw, uint16_t *port);

#endif
