#!/usr/bin/python3
"""The pcap regression suite: every case folder holds a config, the commands that generate its
input captures, the replay arguments, check.py (expectations derived independently: tshark field
reads, scapy, formulas from REFERENCE.md) and golden.json (summary.json and the SHA-256 of every
output file of a known-good run, to catch unintended change).

usage: pcap-tests/run.py [--bless] [--keep DIR] [CASE ...]

  --bless     after the checks pass, write each case's golden.json from this run (after an
              intended change of behaviour; review the diff before committing)
  --keep DIR  leave each case's inputs and outputs in DIR/CASE
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("ROCESW_BUILD", os.path.join(ROOT, "build"))
ROCESW = os.path.join(BUILD, "rocesw")


def expand(arg, case_dir, work):
    return (arg.replace("{rocesw}", ROCESW).replace("{case}", case_dir)
            .replace("{work}", work).replace("{root}", ROOT).replace("{python}", sys.executable))


def digest(out):
    files = {}
    for dirpath, _, names in os.walk(out):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, out)] = hashlib.sha256(f.read()).hexdigest()
    return dict(sorted(files.items()))


def first_difference(a, b, path="summary"):
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'golden' if k in b else 'this run'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} entries != {len(b)} in golden"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} != golden {b!r}"


def run_case(name, work, bless):
    case_dir = os.path.join(HERE, name)
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, ROCESW_BUILD=BUILD, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=HERE)
    for cmd in case.get("generate", []):
        r = subprocess.run([expand(a, case_dir, work) for a in cmd], capture_output=True,
                           text=True, cwd=work, env=env)
        if r.returncode != 0:
            return f"generate {cmd[:2]}: {r.stderr.strip() or r.stdout.strip()}"
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([ROCESW, "replay", "--out", out] +
                       [expand(a, case_dir, work) for a in case["replay"]],
                       capture_output=True, text=True, cwd=work)
    if r.returncode != case.get("exit", 0):
        return f"replay exited {r.returncode}: {r.stderr.strip()}"
    r = subprocess.run([sys.executable, os.path.join(case_dir, "check.py"), out, work],
                       capture_output=True, text=True, env=env, cwd=case_dir)
    if r.returncode != 0:
        return "check.py: " + (r.stderr.strip().splitlines() or ["failed"])[-1] + \
            ("\n" + r.stderr if os.environ.get("PCAP_TESTS_VERBOSE") else "")
    if not os.path.isdir(out):
        return None
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    got = {"summary": summary, "files": digest(out)}
    golden_path = os.path.join(case_dir, "golden.json")
    if bless:
        with open(golden_path, "w") as f:
            json.dump(got, f, indent=1, sort_keys=True)
            f.write("\n")
        return None
    if not os.path.exists(golden_path):
        return "no golden.json: run pcap-tests/run.py --bless " + name
    with open(golden_path) as f:
        golden = json.load(f)
    d = first_difference(got["summary"], golden["summary"])
    if d:
        return "differs from golden: " + d
    for k in sorted(set(got["files"]) | set(golden["files"])):
        if got["files"].get(k) != golden["files"].get(k):
            return f"differs from golden: output file {k}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bless", action="store_true",
                    help="write golden.json of each case from this run (after its checks pass)")
    ap.add_argument("--keep", metavar="DIR", help="keep inputs and outputs in DIR/CASE")
    ap.add_argument("cases", nargs="*", help="case folders to run (default: all)")
    a = ap.parse_args()
    cases = a.cases or sorted(d for d in os.listdir(HERE)
                              if os.path.isfile(os.path.join(HERE, d, "case.json")))
    base = a.keep or tempfile.mkdtemp(prefix="rocesw-pcap-tests-")
    failed = 0
    for name in cases:
        name = os.path.basename(os.path.normpath(name))
        err = run_case(name, os.path.join(base, name), a.bless)
        print(f"{'ok  ' if not err else 'FAIL'} {name}" + (f": {err}" if err else ""), flush=True)
        failed += bool(err)
    if not a.keep:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{len(cases) - failed} of {len(cases)} cases passed" +
          (" (golden files written)" if a.bless and not failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
