"""Reads bench/instructions.sh's callgrind files and logs; prints instructions per packet of
testpmd macswap and rocesw, their ratio, and rocesw's top functions by self cost.
Usage: instructions_report.py WORKDIR PACKETS TOP

The forwarding thread of each program is the one that read the capture (its profile calls
pcap_next_ex); the count is its whole profile divided by the packets it forwarded, which must be
PACKETS (checked against the program's own final counters)."""
import glob
import re
import subprocess
import sys


def total(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    return 0


def forwarding_thread(work, kind):
    """The per-thread profile that read packets, and its instruction count."""
    best = None
    for path in glob.glob(f"{work}/cg.{kind}.*-*"):
        with open(path, errors="replace") as f:
            if "pcap_next_ex" not in f.read():
                continue
        n = total(path)
        if best is None or n > best[1]:
            best = (path, n)
    if best is None:
        sys.exit(f"instructions_report: no thread of {kind} read the capture")
    return best


def testpmd_forwarded(work):
    log = open(f"{work}/testpmd.log", errors="replace").read()
    m = re.search(r"Forward statistics for port 1.*?TX-packets:\s+(\d+)", log, re.S)
    return int(m.group(1)) if m else 0


def rocesw_forwarded(work):
    """Sum of the ports' tx_packets in the final counters' port table."""
    n = 0
    for line in open(f"{work}/rocesw.log", errors="replace"):
        m = re.match(r"(Ethernet\d+)\s+\w+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", line)
        if m:
            n += int(m.group(4))
    return n


def top_functions(path, grand, top):
    """callgrind_annotate's function list (self cost), as (instructions, share, name)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", path], capture_output=True,
                         text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([ \d.]+%\)\s+)?(\S.*)$", line)
        if not m or "PROGRAM TOTALS" in line or ":" not in m.group(2):
            continue
        n = int(m.group(1).replace(",", ""))
        # "file:function [object]": the object's file name is enough
        name = re.sub(r"\s*\[(?:[^]]*/)?([^]/]*)\]$", r" (\1)", m.group(2))
        name = name.split(":", 1)[1]  # the source file is "???" or glibc's
        rows.append((n, 100.0 * n / grand, name))
    return rows[:top]


def main():
    work, packets, top = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    per = {}
    for kind, forwarded in (("testpmd", testpmd_forwarded), ("rocesw", rocesw_forwarded)):
        path, n = forwarding_thread(work, kind)
        fwd = forwarded(work)
        if fwd != packets:
            sys.exit(f"instructions_report: {kind} forwarded {fwd} packets of {packets}")
        per[kind] = (path, n)
        print(f"{kind:<8} {n:>14,} instructions / {packets} packets = {n / packets:8.1f} per packet")
    ratio = per["testpmd"][1] / per["rocesw"][1]
    print(f"ratio testpmd/rocesw instructions (rocesw's speed in testpmd's, were instructions "
          f"all): {ratio:.2f}")
    print(f"\nrocesw forwarding thread, top {top} functions by self cost:")
    for n, share, name in top_functions(per["rocesw"][0], per["rocesw"][1], top):
        print(f"{n / packets:9.1f} /pkt {share:5.1f} %  {name}")


if __name__ == "__main__":
    main()
