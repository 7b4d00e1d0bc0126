"""The closed-loop collectives' frame sizes and a ring's analytic wire bound (docs/replay.md,
"Closed-loop hosts"), shared by the suites that compare a run with it."""

WIRE_EXTRA = 24  # FCS + preamble/SFD + IFG (REFERENCE §3)
MTU = 4096


def data_frame_len(payload, first):
    """A RoCEv2 RDMA WRITE frame without FCS: Ethernet, IPv4, UDP, BTH (58 bytes with the
    ICRC), a RETH on a message's first packet, the payload padded to 4 bytes."""
    pad = (4 - payload % 4) % 4
    return 14 + 20 + 8 + 12 + (16 if first else 0) + payload + pad + 4


def wire_ns(length, speed):
    """Time a frame of this length (without FCS) holds a link of speed Mb/s, gap included."""
    return (length + WIRE_EXTRA) * 8000 / speed


def ring_wire_bound_ns(n, size, speed, mtu=MTU):
    """A ring AllReduce's wire bound: 2(N-1) steps, each putting a chunk of S/N bytes, in MTU
    packets, on a link of speed Mb/s."""
    chunk = size // n
    lens = [data_frame_len(min(mtu, chunk - i), i == 0) for i in range(0, chunk, mtu)]
    return 2 * (n - 1) * sum(wire_ns(x, speed) for x in lens)
