"""Reads the logs of bench/forward.sh and prints Mpps, cycles per packet and the ratios per round
(rocesw/testpmd, rocesw/OVS-DPDK when OVS ran) and their medians. Usage: forward_report.py
WORKDIR ROUNDS, or forward_report.py --steady testpmd|rocesw|ovs LOG (exit 0 once the log shows
STEADY_PERIODS one-second rates within STEADY_SPREAD of their median, 1 while it does not, 2 while
it shows no rate at all)."""
import os
import re
import statistics
import sys


STEADY_PERIODS = 5
STEADY_SPREAD = 0.05


def periods(v):
    """The per-second rates after start-up (the first two non-zero periods are start-up)."""
    return [x for x in v if x > 0][2:]


def is_steady(v):
    """The last STEADY_PERIODS periods agree within STEADY_SPREAD of their median."""
    v = periods(v)[-STEADY_PERIODS:]
    if len(v) < STEADY_PERIODS:
        return False
    m = statistics.median(v)
    return m > 0 and (max(v) - min(v)) / m <= STEADY_SPREAD


def steady(v):
    v = periods(v)[-STEADY_PERIODS:]
    return statistics.median(v) if v else 0.0


def testpmd_rates(path):
    tx = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", open(path).read())]
    # testpmd prints port 0 then port 1 each period: the forwarded rate is port 1's Tx
    return [x for i, x in enumerate(tx) if i % 2 == 1]


def testpmd_pps(path):
    return steady(testpmd_rates(path))


def rocesw_pps(path):
    return steady(rocesw_rates(path))


def rocesw_rates(path):
    rates, cur = [], 0.0
    for line in open(path):
        m = re.match(r"(\S+)\s+rx\s+([\d.]+) pps\s+tx\s+([\d.]+) pps", line)
        if not m:
            continue
        if m.group(1) == "Ethernet0":  # first port: a new period starts
            if cur:
                rates.append(cur)
            cur = 0.0
        cur += float(m.group(3))
    rates.append(cur)
    return rates


def ovs_rates(path):
    """Rates between the bench's samples of the uplinks' sent packets ("ovs-tx TIME PACKETS")."""
    samples = [(float(t), int(n)) for t, n in re.findall(r"^ovs-tx (\S+) (\d+)$", open(path).read(), re.M)]
    return [(n1 - n0) / (t1 - t0) for (t0, n0), (t1, n1) in zip(samples, samples[1:]) if t1 > t0]


def ovs_pps(path):
    return steady(ovs_rates(path))


def core_hz():
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return None


def main():
    if sys.argv[1] == "--steady":
        # bench/forward.sh waits on this: exit 0 once the log shows a steady rate
        kind, log = sys.argv[2], sys.argv[3]
        rates = {"testpmd": testpmd_rates, "rocesw": rocesw_rates, "ovs": ovs_rates}[kind](log)
        # 2: still starting (no non-zero rate yet), which does not count against the run's time
        sys.exit(0 if is_steady(rates) else 1 if any(x > 0 for x in rates) else 2)
    work, rounds = sys.argv[1], int(sys.argv[2])
    with_ovs = os.path.exists(f"{work}/ovs.1.log")
    hz = core_hz()
    cols = {"testpmd": [], "rocesw": [], "ovs": [], "r/t": [], "r/o": []}
    head = f"{'round':<7}{'testpmd Mpps':>14}{'rocesw Mpps':>13}"
    head += f"{'OVS Mpps':>10}" if with_ovs else ""
    head += f"{'rocesw cyc/pkt':>16}{'rocesw/testpmd':>16}"
    head += f"{'rocesw/OVS':>12}" if with_ovs else ""
    print(head)

    def row(label, t, s, o, rt, ro):
        cyc = f"{hz / s:.0f}" if hz and s else "-"
        line = f"{label:<7}{t / 1e6:>14.2f}{s / 1e6:>13.2f}"
        line += f"{o / 1e6:>10.2f}" if with_ovs else ""
        line += f"{cyc:>16}{rt:>16.2f}"
        line += f"{ro:>12.2f}" if with_ovs else ""
        print(line)

    for r in range(1, rounds + 1):
        t = testpmd_pps(f"{work}/testpmd.{r}.log")
        s = rocesw_pps(f"{work}/rocesw.{r}.log")
        o = ovs_pps(f"{work}/ovs.{r}.log") if with_ovs else 1.0
        missing = [k for k, v in (("testpmd", t), ("rocesw", s), ("OVS", o)) if not v]
        if missing:
            # a program that printed no steady rate (it failed to start) has no ratio to give
            print(f"{r:<7}(no rate: {', '.join(missing)}; round excluded)")
            continue
        for k, v in (("testpmd", t), ("rocesw", s), ("ovs", o), ("r/t", s / t), ("r/o", s / o)):
            cols[k].append(v)
        row(str(r), t, s, o, s / t, s / o)
    if not cols["r/t"]:
        sys.exit("no round gave every rate")
    med = {k: statistics.median(v) for k, v in cols.items()}
    row("median", med["testpmd"], med["rocesw"], med["ovs"], med["r/t"], med["r/o"])
    print(f"ratio rocesw/testpmd (median of rounds): {med['r/t']:.2f}")
    if with_ovs:
        print(f"ratio rocesw/OVS-DPDK (median of rounds): {med['r/o']:.2f}")

if __name__ == "__main__":
    main()
