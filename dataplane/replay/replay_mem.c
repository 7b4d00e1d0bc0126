/* Replay packet memory that grows past what DPDK was started with. Without hugepages EAL maps its
 * whole -m size at start and writes a 48-byte descriptor per 4 KiB page of it, so starting with
 * room for every packet a zone's buffers could hold costs 1.2 % of that in resident memory
 * before the first packet (about 280 MB for 23 GiB). Instead EAL starts with what the tables
 * need, and a pool that does not fit gets an anonymous mapping of its own, while the machine has
 * memory free. Not an external DPDK heap: rte_malloc_heap_memory_add zeroes all it is given, so
 * each chunk cost its whole size in page faults before a frame used it (1.1 s of system time
 * for a 1 GiB chunk); a pool's own mapping costs the pages its buffers touch. */
#include <stdio.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "replay_int.h"

#define PAGE 4096ull
#define KEEP_FREE (512ull << 20) /* for the program's own heap, captures' buffers, the kernel */

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

static void unmap_chunk(struct rte_mempool_memhdr *h, void *opaque)
{
	(void)opaque;
	munmap(h->addr, h->len);
}

/* The pool in a mapping of its own: zero pages until a buffer is first written (the mbuf
 * headers and private areas at creation, a data room at its first frame). Its buffers have no
 * IO address and may cross pages: replay hands them to no device. Last-in first-out ("stack" mempool driver): the
 * buffer a frame gets is the one freed last, still in the caches, and buffers beyond the most
 * ever in use at once keep their data rooms untouched; the default ring driver hands out every
 * buffer in turn, so a run's buffers would be as cold, and as resident, as the pool is large. */
static struct rte_mempool *pool_mapped(const char *name, unsigned n, uint16_t data_room)
{
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = data_room,
						.mbuf_priv_size = RP_ROOM_PRIV};
	unsigned elt = (unsigned)sizeof(struct rte_mbuf) + RP_ROOM_PRIV + data_room;
	struct rte_mempool *mp =
		rte_mempool_create_empty(name, n, elt, 0, sizeof(priv), SOCKET_ID_ANY,
					 RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		return NULL;
	size_t min_chunk, align;
	ssize_t len = -1;
	void *va = MAP_FAILED;
	if ((rte_mempool_set_ops_byname(mp, "stack", NULL) == 0 ||
	     rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL) == 0))
		len = rte_mempool_op_calc_mem_size_default(mp, n, 0, &min_chunk, &align);
	if (len > 0 && (uint64_t)len + KEEP_FREE <= rsw_mem_available())
		va = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (va == MAP_FAILED) {
		rte_mempool_free(mp);
		return NULL;
	}
	rte_pktmbuf_pool_init(mp, &priv);
	int added = rte_mempool_populate_iova(mp, va, RTE_BAD_IOVA, (size_t)len, unmap_chunk, NULL);
	if (added <= 0)
		munmap(va, (size_t)len); /* not the pool's: its free would not unmap it */
	if (added != (int)n) {
		rte_mempool_free(mp);
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

struct rte_mempool *rp_pool_create(const char *name, unsigned n, uint16_t data_room)
{
	return pool_mapped(name, n, data_room);
}
