/* Replay packet memory that grows past what DPDK was started with. Without hugepages EAL maps its
 * whole -m size at start and writes a 48-byte descriptor per 4 KiB page of it, so starting with
 * room for every packet a zone's buffers could hold costs 1.2 % of that in resident memory
 * before the first packet (about 280 MB for 23 GiB). Instead EAL starts with what the tables
 * need, and each packet pool gets an anonymous mapping of its own, while the machine has
 * memory free. Not an external DPDK heap: rte_malloc_heap_memory_add zeroes all it is given, so
 * each chunk cost its whole size in page faults before a frame used it (1.1 s of system time
 * for a 1 GiB chunk); a pool's own mapping costs the pages its buffers touch.
 * On those pools, replay's packet memory by frame size and the frames written into it
 * (replay_mem.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "dataplane/pkt/roce_build.h"
#include "dataplane/pkt/roce_hdr.h"
#include "replay.h"
#include "replay_mem.h"

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
	/* the first chunk's callback unmaps the whole mapping (opaque: its length) */
	munmap(h->addr, (size_t)(uintptr_t)opaque);
}

/* buffers' worth of a pool's mapping given to it at a time */
#define CHUNK_BYTES (8u << 20)

static void init_in(struct rte_mempool *mp, void *opaque, void *obj, unsigned idx)
{
	const struct rp_pool_growth *g = opaque;
	const uint8_t *o = obj;
	if (o >= g->va + g->done && o < g->va + g->next)
		rte_pktmbuf_init(mp, NULL, obj, idx);
}

int rp_pool_grow(struct rte_mempool *mp, struct rp_pool_growth *g)
{
	if (g->done >= g->len)
		return 0;
	size_t obj = (size_t)mp->header_size + mp->elt_size + mp->trailer_size;
	size_t chunk = CHUNK_BYTES / obj * obj;
	g->next = g->done + chunk < g->len ? g->done + chunk : g->len;
	int added = rte_mempool_populate_iova(mp, (char *)g->va + g->done, RTE_BAD_IOVA,
					      g->next - g->done, g->done ? NULL : unmap_chunk,
					      (void *)(uintptr_t)g->len);
	if (added <= 0) {
		g->done = g->len; /* no more from this pool */
		return 0;
	}
	rte_mempool_obj_iter(mp, init_in, g);
	g->done = g->next;
	return added;
}

/* The pool in a mapping of its own, given to it a chunk at a time (rp_pool_grow), as its
 * buffers are needed: creating a pool writes a mempool header before each buffer, one page per
 * 4.9 KB buffer, so a pool populated whole at once touched all of its pages before a frame used
 * them (57,000 pages for 27,000 frames queued at the peak of a 4:1 zone's ring). Its pages stay
 * zero until then; a data room's, until its first frame. Its buffers have no IO address and may
 * cross pages: replay hands them to no device. Last-in first-out ("stack" mempool driver): the
 * buffer a frame gets is the one freed last, still in the caches, and buffers beyond the most
 * ever in use at once keep their data rooms untouched; the default ring driver hands out every
 * buffer in turn, so a run's buffers would be as cold, and as resident, as the pool is large. */
static struct rte_mempool *pool_mapped(const char *name, unsigned n, uint16_t data_room,
				       struct rp_pool_growth *g, int huge)
{
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = data_room};
	unsigned elt = (unsigned)sizeof(struct rte_mbuf) + data_room;
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
	if (huge) /* a fault a 2 MiB page, not one a 4 KiB page (a page's fault is dear on a VM) */
		madvise(va, (size_t)len, MADV_HUGEPAGE);
	rte_pktmbuf_pool_init(mp, &priv);
	*g = (struct rp_pool_growth){.va = va, .len = (size_t)len};
	if (rp_pool_grow(mp, g) <= 0) {
		munmap(va, (size_t)len); /* not the pool's yet: its free would not unmap it */
		rte_mempool_free(mp);
		return NULL;
	}
	return mp;
}


/* ---- pools by frame size, and frames written into them ---- */

/* Packet memory grows with what the buffers hold, in pools per frame-size class (a 64-byte frame
 * does not take a 9 KB buffer): a class that runs out gets a new pool twice the size of its last,
 * up to REPLAY_POOL_MAX frames, for as long as memory lasts. Creating a pool touches its memory,
 * so a small run does not pay for a deep one. */
#define REPLAY_POOL_MIN 8192u
#define REPLAY_POOL_MAX 131072u

static const uint16_t mem_room[REPLAY_MEM_CLASSES] = {512, 2048, 4608, RP_FRAME_MAX};

static struct rte_mempool *add_pool(struct rp_mem *mem, unsigned c)
{
	static unsigned instance;
	char name[RTE_MEMPOOL_NAMESIZE];
	if (mem->cls[c].n == mem->cls[c].cap) {
		unsigned cap = mem->cls[c].cap ? 2 * mem->cls[c].cap : 8;
		void *p = realloc(mem->cls[c].pool, cap * sizeof(*mem->cls[c].pool));
		if (!p)
			return NULL;
		mem->cls[c].pool = p;
		mem->cls[c].cap = cap;
	}
	unsigned shift = mem->cls[c].n < 4 ? mem->cls[c].n : 4;
	unsigned n = REPLAY_POOL_MIN << shift;
	snprintf(name, sizeof(name), "rsw_replay%u", instance++);
	struct rte_mempool *mp = pool_mapped(name, n <= REPLAY_POOL_MAX ? n : REPLAY_POOL_MAX,
					     mem_room[c], &mem->cls[c].growth, mem->huge);
	if (mp)
		mem->cls[c].pool[mem->cls[c].n++] = mp;
	return mp;
}

/* What a packet buffer's data room may hold besides zeros, kept across its uses in a dynamic
 * field of its mbuf's second line, which every hop reads anyway (a private area after the mbuf
 * was a line of its own; rte_pktmbuf_init zeroes the mbuf once, as the buffer joins its pool):
 * with zeroed set, nothing beyond dirty_to but the 4 bytes at tail_off (none if 0). A generated
 * RoCE frame is its headers, a zero payload and its ICRC: written into a buffer so known, it
 * costs its headers and the last frame's leftovers, not a copy of 4 KiB (and 64 cache lines)
 * per frame. */
struct rp_room {
	uint8_t zeroed;
	uint16_t dirty_to;
	uint16_t tail_off;
};

int rp_mem_init(struct rp_mem *mem)
{
	static const struct rte_mbuf_dynfield flow_field = {
		.name = "rsw_replay_frame", .size = sizeof(struct rp_frame_tag),
		.align = __alignof__(struct rp_frame_tag)};
	static const struct rte_mbuf_dynfield room_field = {
		.name = "rsw_replay_room", .size = sizeof(struct rp_room),
		.align = __alignof__(struct rp_room)};
	static const struct rte_mbuf_dynflag rest_flag = {.name = "rsw_replay_rest"};
	mem->flow_field = rte_mbuf_dynfield_register(&flow_field);
	mem->room_field = rte_mbuf_dynfield_register(&room_field);
	int bit = rte_mbuf_dynflag_register(&rest_flag);
	mem->rest_flag = bit >= 0 ? 1ull << bit : 0;
	return mem->flow_field < 0 || mem->room_field < 0 || bit < 0 || !add_pool(mem, 0) ? -1 : 0;
}

void *rp_zalloc_lines(size_t bytes)
{
	bytes = (bytes + 63) & ~(size_t)63; /* aligned_alloc takes whole alignments */
	void *p = aligned_alloc(64, bytes ? bytes : 64);
	if (p)
		memset(p, 0, bytes);
	return p;
}

void rp_mem_free(struct rp_mem *mem)
{
	for (unsigned c = 0; c < REPLAY_MEM_CLASSES; c++)
		free(mem->cls[c].pool);
}

static void copy_sparse(struct rp_room *k, uint8_t *buf, uint32_t room, const uint8_t *data,
			uint32_t len)
{
	if (!k->zeroed) {
		memset(buf, 0, room);
		*k = (struct rp_room){.zeroed = 1};
	} else {
		if (k->dirty_to > RSW_ROCE_HDR_MAX)
			memset(buf + RSW_ROCE_HDR_MAX, 0, k->dirty_to - RSW_ROCE_HDR_MAX);
		if (k->tail_off)
			memset(buf + k->tail_off, 0, RSW_ICRC_LEN);
	}
	if (len <= RSW_ROCE_HDR_MAX + RSW_ICRC_LEN) {
		memcpy(buf, data, len);
		k->dirty_to = (uint16_t)len;
		k->tail_off = 0;
		return;
	}
	memcpy(buf, data, RSW_ROCE_HDR_MAX);
	memcpy(buf + len - RSW_ICRC_LEN, data + len - RSW_ICRC_LEN, RSW_ICRC_LEN);
	k->dirty_to = RSW_ROCE_HDR_MAX;
	k->tail_off = (uint16_t)(len - RSW_ICRC_LEN);
}

static void copy_whole(struct rp_room *k, uint8_t *buf, const uint8_t *data, uint32_t len)
{
	memcpy(buf, data, len);
	uint32_t to = k->tail_off ? k->tail_off + RSW_ICRC_LEN : 0;
	to = to > len ? to : len;
	k->dirty_to = (uint16_t)(to > k->dirty_to ? to : k->dirty_to);
	k->tail_off = 0;
}

/* Only the bytes anyone reads: what the buffer held past them stays, and stays accounted. */
static void copy_head(struct rp_room *k, uint8_t *buf, const uint8_t *data, uint32_t head)
{
	memcpy(buf, data, head);
	k->dirty_to = (uint16_t)(head > k->dirty_to ? head : k->dirty_to);
}

/* A buffer of the smallest class that holds `need` bytes, with no headroom (nothing is ever put
 * in front of a frame in replay), or NULL; with first_pool, none from a pool past the class's
 * first. */
static struct rte_mbuf *frame_buffer(struct rp_mem *mem, uint32_t need, int first_pool)
{
	struct rte_mbuf *m = NULL;
	unsigned c = 0;
	while (c < REPLAY_MEM_CLASSES && need > mem_room[c])
		c++;
	if (c == REPLAY_MEM_CLASSES)
		return NULL;
	/* the newest pool first: older ones are full while queues grow */
	for (unsigned i = mem->cls[c].n; !m && i > 0; i--)
		m = rte_pktmbuf_alloc(mem->cls[c].pool[i - 1]);
	/* all in use: the newest pool's next chunk, then a new pool */
	struct rte_mempool *newest = mem->cls[c].n ? mem->cls[c].pool[mem->cls[c].n - 1] : NULL;
	if (!m && newest && rp_pool_grow(newest, &mem->cls[c].growth) > 0)
		m = rte_pktmbuf_alloc(newest);
	if (!m && first_pool && mem->cls[c].n)
		return NULL;
	/* out of memory, trying a new pool per frame would cost a failed allocation of up to a
	 * gigabyte each: the frames are no_mbuf drops, and a new pool is tried again after 65536 of
	 * them (memory the machine may have freed meanwhile) */
	if (!m && mem->cls[c].skip)
		mem->cls[c].skip--;
	else if (!m && add_pool(mem, c))
		m = rte_pktmbuf_alloc(mem->cls[c].pool[mem->cls[c].n - 1]);
	else if (!m)
		mem->cls[c].skip = 65536;
	if (m)
		m->data_off = 0;
	return m;
}

/* A frame of which the buffer holds its first head bytes (all, if len); with `after`, room for
 * that many more bytes past them, 8-byte aligned, which the caller writes. */
static struct rte_mbuf *frame_copy(struct rp_mem *mem, const uint8_t *data, uint32_t len,
				   uint32_t head, uint32_t flow, int roce_sparse, int first_pool,
				   uint32_t after)
{
	/* what the buffer holds: a frame nobody reads past head takes a buffer of head's size */
	uint32_t held = head < len ? head : len;
	uint32_t need = after ? RTE_ALIGN_CEIL(held, 8) + after : held;
	struct rte_mbuf *m = frame_buffer(mem, need, first_pool);
	uint32_t room = m ? rte_pktmbuf_tailroom(m) : 0;
	uint8_t *buf = m ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)held) : NULL;
	if (!buf) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	m->pkt_len = len; /* a frame held in part is still this long on the wire */
	struct rp_room *k = RTE_MBUF_DYNFIELD(m, mem->room_field, struct rp_room *);
	if (roce_sparse) /* data[0, held) is headers and zeros, but for an ICRC at its end */
		copy_sparse(k, buf, room, data, held);
	else if (held < len)
		copy_head(k, buf, data, held);
	else
		copy_whole(k, buf, data, len);
	if (after && need > k->dirty_to) /* what the caller writes after them */
		k->dirty_to = (uint16_t)need;
	*rp_mbuf_tag(mem, m) = (struct rp_frame_tag){.flow = flow};
	return m;
}

struct rte_mbuf *rp_mbuf(struct rp_mem *mem, const uint8_t *data, uint32_t len, uint32_t head,
			 uint32_t flow, int roce_sparse)
{
	return frame_copy(mem, data, len, head, flow, roce_sparse, 0, 0);
}

struct rte_mbuf *rp_mbuf_first_pool(struct rp_mem *mem, const uint8_t *data, uint32_t len,
				    uint32_t head, uint32_t flow)
{
	if (mem->first_pool_off)
		return NULL;
	return frame_copy(mem, data, len, head, flow, 0, 1, 0);
}

struct rte_mbuf *rp_mbuf_ref(struct rp_mem *mem, const uint8_t *data, uint32_t len,
			     uint32_t head, uint32_t flow, void *owner, const uint8_t *rest)
{
	struct rte_mbuf *m = frame_copy(mem, data, len, head, flow, 0, 0, sizeof(struct rp_rest));
	if (!m)
		return NULL;
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	*(struct rp_rest *)(buf + RTE_ALIGN_CEIL(head, 8)) = (struct rp_rest){.rest = rest,
									   .owner = owner};
	m->ol_flags |= mem->rest_flag;
	return m;
}
