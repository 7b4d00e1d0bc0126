"""Reads the logs of bench/forward.sh and prints Mpps, cycles per packet and the ratio per round
and their medians. Usage: forward_report.py WORKDIR ROUNDS"""
import re
import statistics
import sys


def steady(v):
    v = [x for x in v if x > 0][2:]  # skip start-up periods
    return statistics.median(v) if v else 0.0


def testpmd_pps(path):
    tx = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", open(path).read())]
    # testpmd prints port 0 then port 1 each period: the forwarded rate is port 1's Tx
    return steady([x for i, x in enumerate(tx) if i % 2 == 1])


def rocesw_pps(path):
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
    return steady(rates)


def core_hz():
    for line in open("/proc/cpuinfo"):
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return None


def main():
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
