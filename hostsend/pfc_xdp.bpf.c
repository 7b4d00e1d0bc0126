/* XDP program for a lab host's interface: reads the PFC (802.1Qbb, opcode 0x0101) and 802.3x
 * PAUSE (0x0001) frames the switch sends, records per priority until when it asked the host to
 * stop (bpf_ktime_get_ns + quanta × 512 bit times at the link speed), and drops them; every
 * other frame goes on to the kernel stack. `rocesw send` reads the state through an mmap of the
 * map and holds the frames of a paused priority. Built with clang -target bpf. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "pfc_xdp.h"

#define ETH_P_MAC_CONTROL 0x8808
#define OP_PAUSE 0x0001
#define OP_PFC 0x0101

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rsw_pfc_xdp_state);
} rsw_pfc_state SEC(".maps");

static __always_inline void pause_prio(struct rsw_pfc_xdp_state *s, unsigned p, __u64 quanta,
				       __u64 now)
{
	__u64 ns = rsw_pfc_quanta_ns(quanta, s->link_mbps);
	if (quanta) {
		s->pause_until[p] = now + ns;
		__sync_fetch_and_add(&s->xoff[p], 1);
		__sync_fetch_and_add(&s->pause_ns[p], ns);
	} else {
		s->pause_until[p] = 0;
		__sync_fetch_and_add(&s->xon[p], 1);
	}
}

SEC("xdp")
int rsw_pfc_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 key = 0;
	struct rsw_pfc_xdp_state *s = bpf_map_lookup_elem(&rsw_pfc_state, &key);

	if (!s)
		return XDP_PASS;
	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_MAC_CONTROL)) {
		__sync_fetch_and_add(&s->passed, 1);
		return XDP_PASS;
	}
	__sync_fetch_and_add(&s->mac_control_dropped, 1);
	__u8 *p = (__u8 *)(eth + 1);
	__u64 now = bpf_ktime_get_ns();
	if ((void *)(p + 2) > end)
		goto bad;
	__u16 op = (__u16)(p[0] << 8 | p[1]);
	if (op == OP_PFC) {
		/* opcode, class-enable vector (2 bytes, priority i = bit i), 8 times */
		if ((void *)(p + 4 + 2 * RSW_PFC_PRIOS) > end)
			goto bad;
		__u8 cev = p[3];
		for (unsigned i = 0; i < RSW_PFC_PRIOS; i++) {
			if (!(cev & (1u << i)))
				continue;
			__sync_fetch_and_add(&s->pfc_frames[i], 1);
			pause_prio(s, i, (__u64)(p[4 + 2 * i] << 8 | p[5 + 2 * i]), now);
		}
		return XDP_DROP;
	}
	if (op == OP_PAUSE) {
		if ((void *)(p + 4) > end)
			goto bad;
		__u64 quanta = (__u64)(p[2] << 8 | p[3]);
		__sync_fetch_and_add(&s->pause_frames, 1);
		for (unsigned i = 0; i < RSW_PFC_PRIOS; i++)
			pause_prio(s, i, quanta, now);
		return XDP_DROP;
	}
bad:
	__sync_fetch_and_add(&s->mac_control_bad, 1);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
