/* Memory for records sized for the largest switch, of which a switch uses a part (a fib's and a
 * state's arrays of 256 ports): zeroed pages of a mapping of their own, on 4 KiB pages, so what
 * a switch does not touch costs nothing, whatever pages the heap is on. On transparent huge
 * pages (replay's heap, docs/replay.md) a record of 1.2 MB cost its whole 2 MiB pages, zeroed,
 * at the first byte written: most of a zone's set-up time and memory. */
#ifndef RSW_SPARSE_MEM_H
#define RSW_SPARSE_MEM_H

#include <stddef.h>

/* len zeroed bytes, page-aligned, or NULL. A leak checker scans them for pointers as it scans
 * the heap (the records hold the only pointers to what they allocate). */
void *rsw_sparse_alloc(size_t len);
/* Releases p (NULL: nothing), as allocated with len. */
void rsw_sparse_free(void *p, size_t len);

#endif
