/* Replay packet memory that grows past what DPDK was started with. Without hugepages EAL maps its
 * whole -m size at start and writes a 48-byte descriptor per 4 KiB page of it, so starting with
 * room for every packet a zone's buffers could hold costs 1.2 % of that in resident memory
 * before the first packet (about 280 MB for 23 GiB). Instead EAL starts with what the tables
 * need, and pools that do not fit are made in an external DPDK heap (rte_malloc_heap_create)
 * fed with anonymous memory in chunks as the buffers fill, while the machine has memory free. */
#include <stdio.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "replay_int.h"

#define HEAP "rsw_replay_mem"
#define CHUNK_MIN (1ull << 30)
#define PAGE 4096ull
#define KEEP_FREE (512ull << 20) /* for the program's own heap, captures' buffers, the kernel */

static int ext_socket = -1;
static uint64_t ext_bytes;

uint64_t rsw_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* Adds at least need bytes to the external heap. Returns 0, or -1 when the machine has no
 * memory to spare or DPDK refuses another segment. */
static int grow(uint64_t need)
{
	uint64_t len = need + need / 4 + (64ull << 20);
	if (len < CHUNK_MIN)
		len = CHUNK_MIN;
	if (ext_bytes > len)
		len = ext_bytes; /* double what there is: few segments (DPDK allows 128 lists) */
	len = (len + PAGE - 1) / PAGE * PAGE;
	uint64_t avail = rsw_mem_available();
	if (avail < KEEP_FREE + need)
		return -1;
	if (len > avail - KEEP_FREE)
		len = (avail - KEEP_FREE) / PAGE * PAGE;
	if (ext_socket < 0 && rte_malloc_heap_create(HEAP) < 0 && rte_errno != EEXIST)
		return -1;
	void *va = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED)
		return -1;
	if (rte_malloc_heap_memory_add(HEAP, va, len, NULL, 0, PAGE) < 0) {
		munmap(va, len);
		return -1;
	}
	ext_socket = rte_malloc_heap_get_socket(HEAP);
	ext_bytes += len;
	return ext_socket < 0 ? -1 : 0;
}

/* A last-in first-out pool ("stack" mempool driver): the buffer a frame gets is the one freed
 * last, still in the caches, and buffers beyond the most ever in use at once are never touched.
 * The default ring driver is first-in first-out: it hands out every buffer of the pool in turn,
 * so a run's buffers are as cold, and as resident, as the pool is large. */
static struct rte_mempool *pool_on(const char *name, unsigned n, uint16_t data_room, int socket)
{
	struct rte_mempool *mp =
		rte_pktmbuf_pool_create_by_ops(name, n, 0, RP_ROOM_PRIV, data_room, socket, "stack");
	if (!mp && rte_errno != ENOMEM) /* a DPDK without the stack driver */
		mp = rte_pktmbuf_pool_create(name, n, 0, RP_ROOM_PRIV, data_room, socket);
	return mp;
}

struct rte_mempool *rp_pool_create(const char *name, unsigned n, uint16_t data_room)
{
	struct rte_mempool *mp = NULL;
	if (ext_socket >= 0) /* once DPDK's own memory ran out, the external heap first */
		mp = pool_on(name, n, data_room, ext_socket);
	if (!mp)
		mp = pool_on(name, n, data_room, SOCKET_ID_ANY);
	if (mp || rte_errno != ENOMEM)
		return mp;
	uint64_t need = (uint64_t)n * (sizeof(struct rte_mbuf) + data_room + RTE_CACHE_LINE_SIZE);
	if (grow(need) < 0)
		return NULL;
	return pool_on(name, n, data_room, ext_socket);
}
