#!/usr/bin/env python3
"""Runs one test script (and unittest's selection of it) with rocesw's programs built under
ThreadSanitizer (meson -Db_sanitize=thread; scripts/test.sh), and fails if any of them reported a
data race, whatever the test itself concluded: every process writes its reports into a fresh
directory (TSAN_OPTIONS log_path), which must stay empty. DPDK's own code that TSan cannot
follow is suppressed entry by entry in tests/tsan.supp, each with its reason (docs/testing.md).

usage: tsan_run.py SCRIPT [unittest arguments, e.g. Class.test_name]

Where the kernel randomizes mmap more than this TSan runtime's memory layout allows
(vm.mmap_rnd_bits above 28: "FATAL: ThreadSanitizer: unexpected memory mapping"), the test runs
under `setarch -R` (address-space randomization off for it and its children only)."""
import glob
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUPP = os.path.join(HERE, "tsan.supp")
# the runtime of GCC 12 (LLVM 14's) maps its shadow for at most 28 bits of mmap randomness
MAX_RND_BITS = 28


def needs_setarch():
    try:
        with open("/proc/sys/vm/mmap_rnd_bits") as f:
            return int(f.read()) > MAX_RND_BITS
    except (OSError, ValueError):
        return False


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    script = os.path.abspath(sys.argv[1])
    logs = tempfile.mkdtemp(prefix="rocesw-tsan-")
    env = dict(os.environ)
    # history_size: the most memory of old accesses, so that both stacks of a report are restored
    env["ROCESW_TSAN"] = "1"  # a test may allow for the slowdown (never for a race)
    env["TSAN_OPTIONS"] = (f"log_path={logs}/report suppressions={SUPP} history_size=7 "
                           "halt_on_error=0 second_deadlock_stack=1")
    cmd = [sys.executable, script, *sys.argv[2:]]
    if needs_setarch():
        cmd = ["setarch", platform.machine(), "-R", *cmd]
        print("tsan_run: vm.mmap_rnd_bits > 28: running under setarch -R", file=sys.stderr)
    status = subprocess.run(cmd, cwd=os.path.dirname(script), env=env).returncode
    reports = sorted(glob.glob(os.path.join(logs, "report*")))
    for path in reports:
        with open(path, errors="replace") as f:
            sys.stderr.write(f"==== {path}\n{f.read()}")
    if reports:
        print(f"tsan_run: {len(reports)} process(es) reported data races (above)", file=sys.stderr)
        return 1
    for path in glob.glob(os.path.join(logs, "*")):
        os.unlink(path)
    os.rmdir(logs)
    return status


if __name__ == "__main__":
    sys.exit(main())
