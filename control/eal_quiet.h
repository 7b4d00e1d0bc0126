/* EAL for the offline tools: rte_lpm and rte_rcu need it, but they touch no device, need no
 * hugepages and must not leave runtime files behind. */
#ifndef RSW_EAL_QUIET_H
#define RSW_EAL_QUIET_H

/* Returns 0, or -1 with a message on stderr. Safe to call more than once. */
int rsw_eal_init_quiet(const char *prog);

#endif
