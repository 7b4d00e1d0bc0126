"""Helpers shared by the Python test suites: run rocesw, write captures, read them with tshark."""
import atexit
import json
import logging
import os
import shutil
import subprocess
import tempfile

from scapy.utils import wrpcap

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ROCESW_BUILD", os.path.join(ROOT, "build"))
ROCESW = os.path.join(BUILD, "rocesw")
DATAPLANE = os.path.join(BUILD, "rocesw-dataplane")


def tmpdir():
    """A scratch directory removed when the test process exits (ROCESW_KEEP_TMP=1 keeps it to inspect)."""
    d = tempfile.mkdtemp(prefix="rocesw-test-")
    if not os.environ.get("ROCESW_KEEP_TMP"):
        atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def dataplane_cmd(prefix, *args, mem=1024, lcores=("-l", "0-1")):
    """rocesw-dataplane as the tests start it: no hugepages (CI has none), no PCI scan, no shared
    config and a file prefix of its own, so two runs never share a DPDK runtime directory."""
    return [DATAPLANE, "--no-huge", "-m", str(mem), "--no-pci", *lcores, "--no-shconf",
            "--file-prefix", prefix, "--log-level", "error", "--", *args]


def require_root():
    if os.geteuid() != 0:
        raise AssertionError("the live tests need root (network namespaces); CI runs as root")


def write_pcap(path, frames):
    wrpcap(path, frames)
    return path


def inspect(pcap, *args, check=True):
    """rocesw inspect --json → list of dicts, one per frame."""
    r = subprocess.run([ROCESW, "inspect", pcap, "--json", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"rocesw inspect failed ({r.returncode}): {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def tshark_fields(pcap, fields, decode_as=()):
    cmd = ["tshark", "-n", "-r", pcap, "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for d in decode_as:
        cmd += ["-d", d]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = []
    for line in r.stdout.splitlines():
        rows.append(dict(zip(fields, line.split("|"))))
    return rows
