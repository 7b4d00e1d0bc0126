/* Replay's packet memory: pools by frame size that grow as the buffers fill, and each frame's
 * flow in its buffer. A service the engine and the nodes use; it calls nothing of theirs. */
#ifndef RSW_REPLAY_MEM_H
#define RSW_REPLAY_MEM_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#define REPLAY_MEM_CLASSES 4 /* packet memory by frame size */
#define RP_FRAME_MAX 9216u   /* the longest frame packet memory carries (a no_mbuf drop past it) */

/* How much of a pool's mapping it has been given (rp_pool_grow). */
struct rp_pool_growth {
	uint8_t *va;
	size_t len, done, next;
};

struct rp_mem {
	struct {                     /* packet memory of one size class: pools added as it fills */
		struct rte_mempool **pool;
		unsigned n, cap;
		struct rp_pool_growth growth; /* of the newest pool (the older ones have it all) */
		unsigned skip; /* frames not to try a new pool for, after one could not be made */
	} cls[REPLAY_MEM_CLASSES];
	int flow_field;              /* mbuf dynamic field: struct rp_frame_tag */
	int room_field;              /* mbuf dynamic field: what rp_mbuf left in its data room */
	uint64_t rest_flag;          /* mbuf dynamic flag: the frame's rest lies elsewhere */
	int first_pool_off;          /* rp_mbuf_first_pool finds no buffer (to compare) */
	int huge;                    /* pools advised onto transparent huge pages */
};

/* Where a frame made by rp_mbuf_rest keeps the bytes it does not hold, in its data room after
 * those it holds (8-byte aligned): rest is its byte `data_len` on, which owner keeps valid
 * until the frame is gone. */
struct rp_rest {
	const uint8_t *rest;
	void *owner;
};

/* What replay keeps with a frame: its flow (an index in the run's flow table) and the links it
 * was put on so far, the index of its next link in the flow's path when it keeps to it; and its
 * place on the wire. In the mbuf's second line, 24 of the 36 bytes DPDK keeps there for dynamic
 * fields (the buffer's room record, replay_mem.c, takes 6 more). */
struct rp_frame_tag {
	uint32_t flow;
	uint32_t hops;
	/* while on a link's wire (struct link_dir): when its last bit reaches the far end, and the
	 * frame sent after it on the same link direction */
	uint64_t wire_t;
	struct rte_mbuf *wire_next;
};

/* Gives pool mp the next chunk of its mapping; returns the buffers added (0: it has all). */
int rp_pool_grow(struct rte_mempool *mp, struct rp_pool_growth *g);
/* The first pool and the flow field (set mem->huge first). Returns 0, or -1 when neither could
 * be had. */
int rp_mem_init(struct rp_mem *mem);
/* Frees the lists of pools; the pools stay (the TMs handed to the caller may hold packets). */
void rp_mem_free(struct rp_mem *mem);
/* bytes of zeroed memory that begin a cache line, for records laid out a line each (so one
 * record a hop reads is one line); freed with free(). NULL: no memory. */
void *rp_zalloc_lines(size_t bytes);

/* A frame of flow in new packet memory (NULL when there is none): a copy of data, or with
 * roce_sparse, of a frame known to be zero outside its first RSW_ROCE_HDR_MAX bytes and its
 * ICRC (as the closed-loop hosts build them): only those bytes are written. head < len: no one
 * will read the frame's bytes past its first head (rp_frame_head), so the buffer, of head's size
 * class, holds only those: data_len is head, pkt_len the frame's length on the wire. */
struct rte_mbuf *rp_mbuf(struct rp_mem *mem, const uint8_t *data, uint32_t len, uint32_t head,
			 uint32_t flow, int roce_sparse);

/* As rp_mbuf (not sparse), but NULL rather than a pool past the class's first: for a frame
 * whose bytes may instead stay where they are (rp_mbuf_ref) when packet memory would grow. */
struct rte_mbuf *rp_mbuf_first_pool(struct rp_mem *mem, const uint8_t *data, uint32_t len,
				    uint32_t head, uint32_t flow);
/* A frame of which packet memory holds only its first head bytes (< len), copied from data: its
 * bytes from head on are read at rest (the same bytes elsewhere; by captures: no switch reads
 * them), and owner hears when the frame is gone (rp_mbuf_rest). */
struct rte_mbuf *rp_mbuf_ref(struct rp_mem *mem, const uint8_t *data, uint32_t len,
			     uint32_t head, uint32_t flow, void *owner, const uint8_t *rest);

/* The frame's bytes from data_len on when they lie elsewhere (rp_mbuf_ref), else NULL. */
static inline const struct rp_rest *rp_mbuf_rest(const struct rp_mem *mem,
						 const struct rte_mbuf *m)
{
	if (!(m->ol_flags & mem->rest_flag))
		return NULL;
	return (const struct rp_rest *)rte_pktmbuf_mtod_offset(m, const uint8_t *,
							       RTE_ALIGN_CEIL(m->data_len, 8));
}

static inline struct rp_frame_tag *rp_mbuf_tag(const struct rp_mem *mem, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, mem->flow_field, struct rp_frame_tag *);
}

/* The flow a frame belongs to (an index in the run's flow table). */
static inline uint32_t *rp_mbuf_flow(const struct rp_mem *mem, struct rte_mbuf *m)
{
	return &rp_mbuf_tag(mem, m)->flow;
}

#endif
