#!/usr/bin/env bash
# Soak and chaos: tests/configs/zone-soak under roceswd for DURATION seconds, hosts sending lossless
# traffic that honours PFC (rocesw send) and lossy traffic, while on a seeded schedule come valid
# and invalid reloads, port flaps, PFC storms, kill -9 of the dataplane, roceswd restarted, and
# control-socket and /metrics clients churn. Invariants are checked after every round and
# reported at the end (frames, faults by kind, checks, RSS, restarts): bench/soak.py says which.
# It needs root and the live-test lock (namespaces, veths): run it as
#   flock /tmp/rocesw-live.lock bench/soak.sh 3600 </dev/null
# (started without the lock held by a flock above it, it takes the lock itself, waiting for it).
# Usage: bench/soak.sh DURATION [soak.py options: --seed N --report FILE --frames N ...]
# Exit status 0 when every invariant held. No terminal needed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help || -z ${1:-} ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  [[ -n ${1:-} ]] && /usr/bin/python3 bench/soak.py --help | sed -n '/^options:/,$p'
  [[ -n ${1:-} ]]; exit
fi
if [[ $1 == --version ]]; then
  build/rocesw --version; exit 0
fi
# the lock: held by a flock this script runs under, or taken here
held=""
pid=$PPID
while [[ $pid -gt 1 ]]; do
  if tr '\0' ' ' </proc/$pid/cmdline | grep -q '^flock .*/tmp/rocesw-live.lock'; then
    held=1; break
  fi
  pid=$(awk '{print $4}' /proc/$pid/stat)
done
if [[ -z $held && -z ${ROCESW_SOAK_LOCKED:-} ]]; then
  export ROCESW_SOAK_LOCKED=1
  exec flock /tmp/rocesw-live.lock "$0" "$@"
fi
duration=$1; shift
./scripts/build.sh build >/dev/null
exec /usr/bin/python3 bench/soak.py --duration "$duration" "$@" </dev/null
