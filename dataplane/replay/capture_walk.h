/* Classic pcap files read in place: the file read in blocks of many records, its records walked
 * where they lie in a block, a frame's bytes valid until the reader says no frame before it is
 * referenced (rp_cap_walk_keep), not until the next read. libpcap reads each record with a
 * system call into its own buffer, which replay then copied twice (to a host's pending frame,
 * then to packet memory): at 4 KiB RoCE frames that was half of a run's CPU with captures off.
 * Blocks read, not the file mapped: a mapping costs each page a fault, a page-table entry and
 * its removal (with the other threads' TLBs shot down), more than the copy out of the page
 * cache into a block that, reused, stays in cache. libpcap stays the authority: it opens every
 * capture (its errors for a file it cannot read are the user's), and reads from the first record
 * this walk does not take as well formed (truncated, longer than the file's snap length,
 * pcapng), so its answers and errors are unchanged (docs/replay.md, "Limits"). */
#ifndef RSW_CAPTURE_WALK_H
#define RSW_CAPTURE_WALK_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the file from offset `at`, whole records only: a record that does not end in a block
 * starts the next one, which reads it again from its start. */
struct cap_block {
	struct cap_block *next;
	uint64_t at;
	size_t size, len; /* room, bytes read */
	uint8_t b[];
};

struct cap_walk {
	int fd;              /* -1: not walked (libpcap reads every record) */
	/* also mapped (rp_cap_walk_map): the file in a read-only mapping, for frames that keep their
	 * bytes where they lie; per region of it, the frames holding bytes of it (HELD_ONCE set
	 * once one has), and the regions before `passed` the reader keeps no frame of */
	const uint8_t *map;
	uint32_t *holds;
	uint64_t passed;
	uint64_t at;         /* the file offset of the last record's bytes */
	uint64_t size;       /* the file's size when opened */
	uint64_t off;        /* the next record's offset in the file */
	/* the blocks frames may still point into, oldest first; the walk reads in the last */
	struct cap_block *first, *last;
	struct cap_block *spare; /* the last block given back, read into again (still in cache) */
	size_t held;             /* bytes of the blocks in the list */
	uint32_t snaplen;
	uint8_t swapped;     /* written on a machine of the other byte order */
	uint8_t nsec;        /* nanosecond time stamps (else microseconds) */
	const char *path;
};

/* Walks the capture open on fd (already opened and checked by libpcap) when it is a classic
 * pcap file of Ethernet frames in a regular file; w->fd stays -1 when it is not (a pipe,
 * pcapng, a link type with an FCS). The walk reads fd with pread, leaving its offset to libpcap. */
void rp_cap_walk_open(struct cap_walk *w, int fd, const char *path);
/* The next record: 1 with its time (ns), captured length and bytes; 0 at a clean end of the
 * file; -1 when the record at w->off is not one this walk takes, or cannot be read (libpcap
 * reads on from there, and says what it finds). */
int rp_cap_walk_next(struct cap_walk *w, uint64_t *t, uint32_t *len, const uint8_t **data);
/* No frame read before keep is referenced any more: the blocks before keep's are given back, so
 * the walk holds what is still to be sent, not the file read so far. */
void rp_cap_walk_keep(struct cap_walk *w, const uint8_t *keep);
void rp_cap_walk_close(struct cap_walk *w);

/* Mapped as well: for a run whose frames may keep their bytes past the headers where they lie
 * in the file (for captures of the payload) rather than in packet memory, where each would take
 * a page of fresh memory. The walk still reads blocks; 0, or -1 when the file cannot be mapped.
 * A page of the mapping is touched only when a frame's bytes are read there, and a region of
 * RP_CAP_REGION bytes that was goes back once the reader keeps no frame of it
 * (rp_cap_walk_keep) and no frame holds any of its bytes (rp_cap_walk_hold); a page gone back
 * that is read again maps the file's page again. The file must not shrink meanwhile (a page
 * past its end would fault). */
#define RP_CAP_REGION (1u << 20)
int rp_cap_walk_map(struct cap_walk *w);
/* The bytes at file offset `at` in the mapping, or NULL (not mapped). */
static inline const uint8_t *rp_cap_walk_mapped(const struct cap_walk *w, uint64_t at)
{
	return w->map && at < w->size ? w->map + at : NULL;
}
/* The n bytes at p (in the mapping) are held by a frame until rp_cap_walk_drop. */
void rp_cap_walk_hold(struct cap_walk *w, const uint8_t *p, uint32_t n);
void rp_cap_walk_drop(struct cap_walk *w, const uint8_t *p, uint32_t n);

#endif
