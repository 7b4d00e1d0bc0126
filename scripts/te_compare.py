#!/usr/bin/env python3
"""Path pinning, centralized TE and E-ECMP side by side, closed loop (docs/te.md, "Closed loop").

  scripts/te_compare.py --out build/te-compare [--rocesw build/rocesw] [--size 16M]

Writes a 4-rack zone (4 hosts a rack, 4 CTSWs, 400G; scripts/gen_zone.py) and runs a 16-rank
ring AllReduce placed fragmented (a fixed shuffle of the hosts in which racks send two flows to
destinations of one slice) with rocesw replay, three ways:
  pinned  POLICY_ROUTE on every RTSW host port: traffic for a destination in slice k (its
          port's index at its RTSW) takes uplink k, as the seeds' path pinning does;
  te      replay --te: rocesw te's CSPF routes for the job (re-installed --te-reinstall-ns
          after the failure);
  eecmp   no pinning, 4 QPs per connection, every switch hashing with the E-ECMP policy of
          config/hash-policies.yaml (destination QP added to the 5-tuple by UDF);
each without failure and with ctsw1 failing at --fail-at. Prints each run's completion, its
ratio to the wire bound and the analytic bound of the case, and writes OUT/compare.json.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fabric_study import Zone, fragmented_order, pinned_edit, write_variant  # noqa: E402

RACKS = HOSTS = CTSWS = 4
N = RACKS * HOSTS
ZONE = Zone(RACKS, HOSTS, CTSWS, 400000)


def pinned_zone(zdir, out):
    """The zone with slice pinning: POLICY_ROUTE per RTSW host port and remote destination."""
    write_variant(zdir, out, pinned_edit(ZONE))


def ring_order():
    """A fixed shuffle whose slice pinning puts two flows on one uplink of every rack and no
    more (the seeds' fragmented placement)."""
    return fragmented_order(ZONE)


def run(rocesw, zone, out, spec, extra):
    cmd = [rocesw, "replay", "--config", zone, "--collective", spec, "--out", out, "--quiet",
           "--captures", "none", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {r.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        c = json.load(f)["collective"]
    return c["done_ns"], c["complete"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rocesw", default=os.path.join(HERE, "..", "build", "rocesw"))
    ap.add_argument("--size", default="16M", help="AllReduce size (default 16M)")
    ap.add_argument("--fail-at", type=int, default=100000, help="ns (default 100000)")
    ap.add_argument("--reinstall-ns", type=int, default=100000,
                    help="TE's re-install delay after the failure (default 100000)")
    a = ap.parse_args()
    zdir = os.path.join(a.out, "zone")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_zone.py"), "--racks", str(RACKS),
                    "--hosts", str(HOSTS), "--ctsws", str(CTSWS), "--out", zdir], check=True,
                   stdout=subprocess.DEVNULL)
    pdir = os.path.join(a.out, "pinned")
    pinned_zone(zdir, pdir)
    order = ring_order()
    ranks = ":".join(f"h{i}" for i in order)
    size = int(a.size[:-1]) << {"K": 10, "M": 20, "G": 30}[a.size[-1]] if a.size[-1] in "KMG" \
        else int(a.size)
    base = f"ring,size={a.size},ranks={ranks}"
    # the wire bound: 2(N-1) steps of S/N bytes at 400G; with ctsw1 down from t_f each rack
    # has 3 uplinks for 4 flows of 400G: the fabric's best is 4/3 of the wire time after t_f
    wire = 2 * (N - 1) * size / N * 8 / 400e9 * 1e9
    fail_bound = a.fail_at + (wire - a.fail_at) * 4 / 3
    fail = ["--fail", f"ctsw1@{a.fail_at}"]
    eecmp = ["--hash-policy", os.path.join(HERE, "..", "config", "hash-policies.yaml:eecmp")]
    cases = [
        ("pinned", os.path.join(pdir, "zone.yaml"), base, [], wire),
        ("te", os.path.join(zdir, "zone.yaml"), base, ["--te"], wire),
        ("eecmp", os.path.join(zdir, "zone.yaml"), base + ",qps=4", eecmp, wire),
        ("pinned+fail", os.path.join(pdir, "zone.yaml"), base, fail, fail_bound),
        ("te+fail", os.path.join(zdir, "zone.yaml"), base,
         ["--te", "--te-reinstall-ns", str(a.reinstall_ns), *fail], fail_bound),
        ("eecmp+fail", os.path.join(zdir, "zone.yaml"), base + ",qps=4", eecmp + fail,
         fail_bound),
    ]
    rows = []
    print(f"ring AllReduce of {a.size} over 16 ranks, placed {ranks}")
    print(f"wire bound {wire / 1e3:.1f} us; with ctsw1 down at {a.fail_at / 1e3:.0f} us "
          f"{fail_bound / 1e3:.1f} us\n")
    print(f"{'run':<12} {'done us':>9} {'x wire':>7} {'x bound':>8} complete")
    for name, zone, spec, extra, bound in cases:
        done, ok = run(a.rocesw, zone, os.path.join(a.out, name), spec, extra)
        rows.append({"run": name, "done_ns": done, "complete": ok, "bound_ns": bound,
                     "wire_ns": wire})
        print(f"{name:<12} {done / 1e3:9.1f} {done / wire:7.2f} {done / bound:8.2f} {ok}")
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump({"ranks": ranks, "size": a.size, "fail_at_ns": a.fail_at,
                   "reinstall_ns": a.reinstall_ns, "runs": rows}, f, indent=2)


if __name__ == "__main__":
    main()
