/* Classic pcap files read in place: the file mapped, its records walked where they lie, a frame's
 * bytes valid for as long as the mapping (the whole run), not until the next read. libpcap reads
 * each record with a system call into its own buffer, which replay then copied twice (to a host's
 * pending frame, then to packet memory): at 4 KiB RoCE frames that was half of a run's CPU with
 * captures off. libpcap stays the authority: it opens every capture (its errors for a file it
 * cannot read are the user's), and reads from the first record this walk does not take as
 * well formed (truncated, longer than the file's snap length, pcapng), so its answers and errors
 * are unchanged (docs/replay.md, "Inputs"). */
#ifndef RSW_CAPTURE_MAP_H
#define RSW_CAPTURE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct cap_map {
	const uint8_t *base; /* NULL: not mapped */
	size_t size;
	size_t off;          /* the next record's offset */
	size_t dropped;      /* pages before it given back */
	uint32_t snaplen;
	uint8_t swapped;     /* written on a machine of the other byte order */
	uint8_t nsec;        /* nanosecond time stamps (else microseconds) */
	const char *path;
};

/* Maps the capture open on fd (already opened and checked by libpcap) when it is a classic
 * pcap file of Ethernet frames in a regular file; m->base stays NULL when it is not (a pipe,
 * pcapng, a link type with an FCS) or cannot be mapped. */
void rp_cap_map(struct cap_map *m, int fd, const char *path);
/* The next record: 1 with its time (ns), captured length and bytes; 0 at a clean end of the
 * file; -1 when the record at m->off is not one this walk takes (libpcap reads on from there). */
int rp_cap_map_next(struct cap_map *m, uint64_t *t, uint32_t *len, const uint8_t **data);
/* No frame before keep is referenced any more: their pages go back to the page cache, so the
 * mapping holds what is still to be sent, not the whole file read so far. */
void rp_cap_map_drop(struct cap_map *m, const uint8_t *keep);
void rp_cap_unmap(struct cap_map *m);

#endif
