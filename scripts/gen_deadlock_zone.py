#!/usr/bin/env python3
"""Write the PFC deadlock scenario of docs/replay.md ("PFC deadlock"): a 4-rack, 2-CTSW zone of
scripts/gen_zone.py (2 hosts a rack, 16 MiB buffers so that PFC acts within microseconds) where
links ctsw1-rtsw1 and ctsw2-rtsw2 fail, in three variants:

  bounce/  each CTSW's route to the rack it lost falls back to a detour down through another
           rack (ctsw1: rack 1 via rtsw3; ctsw2: rack 2 via rtsw4), and that rack sends what
           comes down for the lost rack back up to the other CTSW (a POLICY_ROUTE on its
           uplink): down-up, out of up-down order. An all-to-all on priority 3 deadlocks.
  pfcwd/   the same, with the PFC watchdog (action drop, 1 ms detection) on every port.
  updown/  no detour: each RTSW sends traffic for a rack only through the CTSWs that still
           reach it (what a fabric's routing converges to when a CTSW withdraws the rack).
           Racks 1 and 2 then have no path to each other at all: the price of up-down order
           with two CTSWs.

  scripts/gen_deadlock_zone.py --out config/zone-deadlock
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RACK_HOSTS = {r: [f"10.1.0.{2 * h + 1}" for h in (r - 1, r + 3)] for r in range(1, 5)}
RTSW_UP = {1: "Ethernet16", 2: "Ethernet24"}            # RTSW port towards ctsw1, ctsw2


def ctsw_addr(c, r):
    """The RTSW r's address on its link to CTSW c (the CTSW's next hop for rack r)."""
    return f"10.254.0.{8 * (c - 1) + 2 * r - 1}"


def rtsw_addr(c, r):
    """CTSW c's address on its link to RTSW r (the RTSW's next hop up)."""
    return f"10.254.0.{8 * (c - 1) + 2 * r - 2}"


def patch(path, old, new):
    with open(path) as f:
        text = f.read()
    if old not in text:
        sys.exit(f"{path}: '{old}' not found")
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


# (CTSW that lost a rack, the lost rack, the rack it detours through)
DETOURS = [(1, 1, 3), (2, 2, 4)]


def bounce(d):
    for c, lost, via in DETOURS:
        for h in RACK_HOSTS[lost]:
            patch(f"{d}/ctsw{c}.yaml", f'"{h}/32": {{nexthop: "{ctsw_addr(c, lost)}"}}',
                  f'"{h}/32": {{nexthop: "{ctsw_addr(c, lost)},{ctsw_addr(c, via)}", '
                  f'distance: "0,10"}}')
        other = 3 - c
        lines = "".join(f'  "{RTSW_UP[c]}|{h}/32": {{nexthop: "{rtsw_addr(other, via)}"}}\n'
                        for h in RACK_HOSTS[lost])
        append(f"{d}/rtsw{via}.yaml",
               f"# the detour of ctsw{c} for rack {lost}: what comes down from ctsw{c} for rack "
               f"{lost} goes back up to ctsw{other}\nPOLICY_ROUTE:\n{lines}")


def updown(d):
    for r in range(1, 5):
        lines = ""
        for c, lost, _ in DETOURS:
            if r == lost:
                continue
            other = 3 - c
            for h in RACK_HOSTS[lost]:
                lines += f'  "{h}/32": {{nexthop: "{rtsw_addr(other, r)}"}}\n'
        patch(f"{d}/rtsw{r}.yaml", '  "10.1.0.0/16": {nexthop_group: uplinks}\n',
              '  "10.1.0.0/16": {nexthop_group: uplinks}\n'
              "  # up-down: a lost rack only through the CTSW that still reaches it\n" + lines)


def watchdog(d):
    for sw in ("rtsw1", "rtsw2", "rtsw3", "rtsw4", "ctsw1", "ctsw2"):
        ports = ("Ethernet0", "Ethernet8", "Ethernet16", "Ethernet24")
        lines = "".join(f"  {p}: {{action: drop, detection_time: 1, restoration_time: 1}}\n"
                        for p in ports)
        append(f"{d}/{sw}.yaml", "PFC_WD:\n  GLOBAL: {POLL_INTERVAL: 1}\n" + lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory to write the three variants in")
    a = ap.parse_args()
    for variant, edits in (("bounce", [bounce]), ("pfcwd", [bounce, watchdog]),
                           ("updown", [updown])):
        d = os.path.join(a.out, variant)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_zone.py"), "--racks", "4",
                        "--hosts", "2", "--ctsws", "2", "--rtsw-buffer", "16M",
                        "--ctsw-buffer", "16M", "--out", d,
                        "--name", f"zone-deadlock-{variant}"], check=True)
        for e in edits:
            e(d)


if __name__ == "__main__":
    main()
