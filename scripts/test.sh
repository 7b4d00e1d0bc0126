#!/usr/bin/env bash
# Set up, build, and run every test suite: the normal build (unit, parser, pcap, mpi; then live, under
# the lab lock /tmp/rocesw-live.lock), then the unit,
# parser and pcap suites again under AddressSanitizer + UndefinedBehaviorSanitizer, and roceswd's
# live test under them with leak detection (roceswd exits non-zero on SIGTERM if it leaked), then
# the tests whose programs run threads under ThreadSanitizer (the tsan suite: tests/tsan_run.py
# fails a test on any race report; it adds `setarch -R` where vm.mmap_rnd_bits is above the 28
# bits this TSan runtime maps; docs/testing.md), then a few seconds of coverage-guided fuzzing
# per tests/fuzz target (scripts/fuzz.sh).
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build
meson test -C build --print-errorlogs --num-processes 2 --no-suite live
# live tests (network namespaces, veths, the machine's CPUs) under the lab lock, which every live
# run takes: two at once on one machine starve each other's switches
flock /tmp/rocesw-live.lock meson test -C build --print-errorlogs --num-processes 2 --suite live
./scripts/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug -Db_lto=false -Dns3_mpi=disabled
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --num-processes 2 --suite unit --suite parser --suite pcap
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  flock /tmp/rocesw-live.lock meson test -C build-asan --print-errorlogs test_live_roceswd
# ThreadSanitizer: live tests with 2+ threads (network namespaces: the lab lock, as any live run)
./scripts/build.sh build-tsan -Db_sanitize=thread -Dbuildtype=debug -Db_lto=false -Dns3_mpi=disabled
flock /tmp/rocesw-live.lock meson test -C build-tsan --print-errorlogs --suite tsan
# coverage-guided fuzzing (libFuzzer + ASan + UBSan), a few seconds per target
./scripts/fuzz.sh --seconds 5
echo "scripts/test.sh: all suites passed"
