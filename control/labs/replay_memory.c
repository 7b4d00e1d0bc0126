/* DPDK memory for an offline run, sized from what its switch configs ask for: their route tables
 * and the first packet buffers. Without hugepages EAL maps the whole -m size at start and writes
 * a 48-byte descriptor per 4 KiB page of it (1.2 % of the size, about 190 MB for 16 GiB), so the
 * packets the buffers may hold are not reserved up front: replay grows packet memory as they
 * fill (dataplane/replay/replay_mem.c). The old fixed 1 GiB refused zones of 16 switches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/config/config.h"
#include "dataplane/replay/replay.h"
#include "dataplane/tables/table_write.h"
#include "replay_memory.h"
#include "dataplane/config/zone.h"

#define MIB (1024ull * 1024)
/* EAL's own allocations, the replay's first packet pool of each frame-size class (8192 frames
 * of 768, 2304, 4864 and 9472 bytes with mbuf header and headroom: 136 MiB) and their rings. */
#define BASE_MB 256ull
/* a compact IPv4 table (RIB trie, RTE_FIB_DUMMY): 2 RIB nodes per route in a mempool with
 * per-lcore caches, about 800 bytes a route measured (tests/unit/test_fib_compact.c) */
#define ROUTE4_BYTES 1024ull
/* rte_lpm6: 1024 + needed tbl8 groups of 1 KiB (at most 13 per route) and its rule hash */
#define LPM6_BASE (2 * MIB)
#define ROUTE6_BYTES (14 * 1024ull)
/* per switch: rte_fib and RIB headers, mempool caches, a RIB per port with policy routes */
#define SWITCH_BYTES (256 * 1024ull)

/* Packet memory a switch's buffer can make the replay hold: every packet held is charged to an
 * ingress pool (with its PG's headroom), so the ingress pools' sizes bound it; packets sit in
 * buffers of their frame-size class, at most 1.25 times their size for frames of 512 bytes up. */
static uint64_t buffer_bytes(const struct rsw_switch_cfg *sw, unsigned n_ports)
{
	uint64_t in = 0, most = 0;
	for (unsigned i = 0; i < sw->tm.n_pools; i++) {
		const struct rsw_buf_pool_cfg *p = &sw->tm.pool[i];
		if (p->type == RSW_POOL_INGRESS)
			in += p->size;
		if (p->size > most)
			most = p->size;
	}
	/* headroom: about 100 KB per port at 400G and 40 m (REFERENCE.md §2) */
	return (in ? in : most) + n_ports * 128 * 1024ull;
}

static int one_switch(const char *path, uint64_t *tables, uint64_t *packets, char *err,
		      size_t errlen)
{
	struct rsw_txn *txn = rsw_txn_new();
	if (!txn) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (rsw_config_compile(path, txn, err, errlen) < 0) {
		rsw_txn_free(txn);
		return -1;
	}
	uint64_t n4 = 0, n6 = 0;
	unsigned ports = 0;
	const struct rsw_switch_cfg *sw = NULL;
	for (size_t i = 0; i < rsw_txn_len(txn); i++) {
		const struct rsw_table_write *w = rsw_txn_at(txn, i);
		if (w->table == RSW_T_ROUTE && w->u.route.prefix.ip.family == 4)
			n4++;
		else if (w->table == RSW_T_ROUTE)
			n6++;
		else if (w->table == RSW_T_PORT)
			ports++;
		else if (w->table == RSW_T_SWITCH)
			sw = &w->u.sw;
	}
	*tables += SWITCH_BYTES + n4 * ROUTE4_BYTES + (n6 ? LPM6_BASE + n6 * ROUTE6_BYTES : 0);
	if (sw)
		*packets += buffer_bytes(sw, ports) / 4 * 5;
	rsw_txn_free(txn);
	return 0;
}

int rsw_replay_dpdk_mb(const char *config, int zone, FILE *note, unsigned long *mb, char *err,
		       size_t errlen)
{
	char **paths = NULL;
	unsigned n = 0;
	char *one[1] = {(char *)config};
	if (zone && rsw_zone_switch_configs(config, &paths, &n, err, errlen) < 0)
		return -1;
	uint64_t tables = 0, packets = 0;
	int rc = 0;
	for (unsigned i = 0; i < (zone ? n : 1) && rc == 0; i++)
		rc = one_switch(zone ? paths[i] : one[0], &tables, &packets, err, errlen);
	for (unsigned i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (rc < 0) {
		*mb = 1024; /* loading the zone reports the config's error, with the switch's name */
		return 0;
	}
	/* packets beyond the first pools go to memory replay adds as the buffers fill
	 * (dataplane/replay/replay_mem.c): EAL starts with what the tables need */
	uint64_t want = BASE_MB * MIB + tables;
	/* leave the machine 512 MiB for the program's own heap, captures' buffers, the kernel */
	uint64_t avail = rsw_mem_available(), room = avail > 512 * MIB ? avail - 512 * MIB : 0;
	if (avail && want > room) {
		snprintf(err, errlen, "the zone needs %llu MiB of DPDK memory for its tables and "
			 "first packet buffers, and the machine has %llu MiB available",
			 (unsigned long long)(want / MIB), (unsigned long long)(room / MIB));
		return -1;
	}
	if (avail && want + packets > room && note)
		fprintf(note, "rocesw replay: the switches' buffers could hold %llu MiB of packets and "
			"the machine has %llu MiB available: a packet past that would be a no_mbuf "
			"drop\n", (unsigned long long)(packets / MIB), (unsigned long long)(room / MIB));
	*mb = (unsigned long)((want + MIB - 1) / MIB);
	return 0;
}
