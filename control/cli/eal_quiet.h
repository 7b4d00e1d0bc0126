/* EAL for the offline tools: rte_lpm and rte_rcu need it, but they touch no device, need no
 * hugepages and must not leave runtime files behind. */
#ifndef RSW_EAL_QUIET_H
#define RSW_EAL_QUIET_H

/* Returns 0, or -1 with a message on stderr. Safe to call more than once. */
int rsw_eal_init_quiet(const char *prog);
/* The same with mb MiB of DPDK memory instead of 1024. Without hugepages it is an anonymous
 * mapping that the kernel backs only where it is touched. */
int rsw_eal_init_sized(const char *prog, unsigned long mb);

#endif
