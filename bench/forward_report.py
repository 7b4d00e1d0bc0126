"""Reads the logs of bench/forward.sh and prints Mpps, cycles per packet and the ratio per round
and their medians. Usage: forward_report.py WORKDIR ROUNDS, or forward_report.py --steady testpmd|rocesw LOG (exit 0
once the log shows STEADY_PERIODS one-second rates within STEADY_SPREAD of their median)."""
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


def core_hz():
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return None


def main():
    if sys.argv[1] == "--steady":
        # bench/forward.sh waits on this: exit 0 once the log shows a steady rate
        kind, log = sys.argv[2], sys.argv[3]
        rates = {"testpmd": testpmd_rates, "rocesw": rocesw_rates}[kind](log)
        sys.exit(0 if is_steady(rates) else 1)
    work, rounds = sys.argv[1], int(sys.argv[2])
    hz = core_hz()
    tps, rss, ratios = [], [], []
    print(f"{'round':<7}{'testpmd Mpps':>14}{'rocesw Mpps':>13}{'rocesw cyc/pkt':>16}{'ratio':>8}")
    for r in range(1, rounds + 1):
        t = testpmd_pps(f"{work}/testpmd.{r}.log")
        s = rocesw_pps(f"{work}/rocesw.{r}.log")
        if not t or not s:
            # a program that printed no steady rate (it failed to start) has no ratio to give
            print(f"{r:<7}{'(no rate: ' + ('testpmd' if not t else 'rocesw') + ', round excluded)':>51}")
            continue
        ratio = s / t
        tps.append(t)
        rss.append(s)
        ratios.append(ratio)
        cyc = f"{hz / s:.0f}" if hz and s else "-"
        print(f"{r:<7}{t / 1e6:>14.2f}{s / 1e6:>13.2f}{cyc:>16}{ratio:>8.2f}")
    if not ratios:
        sys.exit("no round gave both rates")
    t, s = statistics.median(tps), statistics.median(rss)
    cyc = f"{hz / s:.0f}" if hz and s else "-"
    print(f"{'median':<7}{t / 1e6:>14.2f}{s / 1e6:>13.2f}{cyc:>16}{statistics.median(ratios):>8.2f}")
    print(f"ratio rocesw/testpmd (median of rounds): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
