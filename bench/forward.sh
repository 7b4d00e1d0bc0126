#!/usr/bin/env bash
# One worker forwarding a RoCEv2 mix from net_pcap (infinite_rx) to four net_null ports through the
# full pipeline (parse, LPM, E-ECMP hash with UDF, resilient buckets, TTL/MAC rewrite, traffic
# manager), against dpdk-testpmd --forward-mode=macswap and OVS-DPDK (Debian's
# openvswitch-switch-dpdk: a select group on the 5-tuple, dec_ttl and MAC rewrite, one PMD core)
# on the same vdevs and traffic, in the same run. The three alternate for ROUNDS rounds so that a
# shared host's drifting speed hits all alike; the ratios reported are the medians of the
# per-round ratios. Each run lasts until its per-second rate is steady (5 periods within 5 %,
# bench/forward_report.py) or MAX_SECONDS pass after its first rate; no terminal is needed. OVS
# runs from a private directory (its own ovsdb-server, db, sockets; never the system service) on
# hugepages the bench reserves and gives back at exit (needs root). BENCH_OVS=0 leaves OVS out;
# BENCH_HUGE=1 runs testpmd and rocesw on those 2 MiB hugepages too (default: --no-huge, 4 KiB
# pages, as on a machine without hugepages); KEEP=DIR keeps the logs.
# Usage: bench/forward.sh [MAX_SECONDS_PER_RUN] [ROUNDS]    (defaults 60 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
secs=${1:-60}
rounds=${2:-3}
with_ovs=${BENCH_OVS:-1}
with_huge=${BENCH_HUGE:-0}
ovs_bin=/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
ovs_pages=512   # 1 GiB of 2 MiB pages: OVS's shared mempool for MTU 1500 and the capture
if [[ $with_ovs == 1 ]]; then
  [[ -x $ovs_bin ]] || { echo "forward.sh: $ovs_bin missing (apt-get install openvswitch-switch-dpdk, or BENCH_OVS=0)" >&2; exit 1; }
  [[ $(id -u) == 0 ]] || { echo "forward.sh: OVS-DPDK needs hugepages, which only root reserves (or BENCH_OVS=0)" >&2; exit 1; }
fi
if [[ $with_huge == 1 && $(id -u) != 0 ]]; then
  echo "forward.sh: BENCH_HUGE=1 needs hugepages, which only root reserves" >&2; exit 1
fi
./scripts/build.sh "${BENCH_BUILD:-build}" >/dev/null
work=$(mktemp -d /tmp/rocesw-bench.XXXXXX)
pages_before= huge= ovsdb= cur=
export OVS_RUNDIR=$work/ovs OVS_LOGDIR=$work/ovs OVS_DBDIR=$work/ovs  # never the system's
cleanup() {
  if [[ -n $cur ]]; then kill "$cur" 2>/dev/null || true; wait "$cur" 2>/dev/null || true; fi
  if [[ -n $ovsdb ]]; then kill "$ovsdb" 2>/dev/null || true; wait "$ovsdb" 2>/dev/null || true; fi
  if [[ -n $huge ]]; then umount "$huge" 2>/dev/null || true; fi
  if [[ -n $pages_before ]]; then echo "$pages_before" > /proc/sys/vm/nr_hugepages; fi
  if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp -r "$work"/*.log "$work"/ovs "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
/usr/bin/python3 bench/make_mix.py "$work/mix.pcap"
sed "s|@MIX@|$work/mix.pcap|" bench/forward.yaml > "$work/switch.yaml"
# One program runs at a time, so the three share one reservation: rocesw's and testpmd's 2 GiB
# (--huge-unlink gives the pages back when the program exits), or OVS's 1 GiB alone.
mem_mib=2048
reserve_huge() {
  local pages=$1
  mkdir -p "$work/huge"
  pages_before=$(cat /proc/sys/vm/nr_hugepages)
  echo $((pages_before + pages)) > /proc/sys/vm/nr_hugepages
  if (( $(cat /proc/sys/vm/nr_hugepages) < pages_before + pages )); then
    echo "forward.sh: could not reserve $pages hugepages of 2 MiB (memory fragmented?)" >&2; exit 1
  fi
  mount -t hugetlbfs -o pagesize=2M nodev "$work/huge"
  huge=$work/huge
}
if [[ $with_huge == 1 ]]; then
  reserve_huge $((mem_mib / 2 > ovs_pages ? mem_mib / 2 : ovs_pages))
  eal=(--huge-dir "$work/huge" --huge-unlink -m "$mem_mib")
else
  eal=(--no-huge -m "$mem_mib")
fi
eal+=(--no-pci -l 0-1 --no-shconf --log-level error)
# A FIFO opened read-write as a program's stdin: never at end-of-file (testpmd without a terminal
# otherwise reads EOF as "press enter to exit"), and no holder process to outlive the run.
mkfifo "$work/stdin"

# OVS-DPDK: the database lives for the whole bench, ovs-vswitchd only during its rounds (its PMD
# polls its core even when idle). The bridge's ports are the same vdevs as the other programs'.
ovs_db=$work/ovs/db.sock
ovsctl() { ovs-vsctl --db="unix:$ovs_db" --timeout=30 "$@"; }
ovs_setup() {
  mkdir -p "$work/ovs"
  [[ -n $huge ]] || reserve_huge "$ovs_pages"
  ovsdb-tool create "$work/ovs/conf.db" /usr/share/openvswitch/vswitch.ovsschema
  ovsdb-server "$work/ovs/conf.db" --remote="punix:$ovs_db" --unixctl="$work/ovs/ovsdb.ctl" \
    --log-file="$work/ovs/ovsdb.log" --no-chdir > /dev/null 2>&1 0<> "$work/stdin" &
  ovsdb=$!
  local i=0
  while [[ ! -S $ovs_db ]] && (( i++ < 100 )); do sleep 0.1; done
  ovsctl --no-wait init
  # main thread on core 0, the PMD on core 1: as testpmd's and rocesw's main and forwarding lcores
  ovsctl --no-wait set Open_vSwitch . other_config:dpdk-init=true other_config:dpdk-lcore-mask=0x1 \
    other_config:pmd-cpu-mask=0x2 other_config:dpdk-socket-mem=1024 other_config:dpdk-socket-limit=1024 \
    "other_config:dpdk-extra=\"--huge-dir $work/huge --file-prefix bench-ovs --no-pci\""
  # secure: no NORMAL flow floods the uplinks before the group and route are installed
  local p args=(-- add-br br0 -- set bridge br0 datapath_type=netdev fail_mode=secure
    -- add-port br0 p0 -- set Interface p0 type=dpdk ofport_request=1
       "options:dpdk-devargs=\"net_pcap0,rx_pcap=$work/mix.pcap,infinite_rx=1\"")
  for p in 1 2 3 4; do
    args+=(-- add-port br0 "u$p" -- set Interface "u$p" type=dpdk ofport_request=$((p + 1))
           "options:dpdk-devargs=\"net_null$p,no-rx=1\"")
  done
  ovsctl --no-wait "${args[@]}"
}
# The route as rocesw's bench/forward.yaml has it: 10/8 to a group over the four uplinks, hashed on
# the 5-tuple (OVS has no field for the BTH destination QP), TTL decremented, both MACs rewritten.
ovs_flows() {
  local of=(ovs-ofctl -O OpenFlow15) b=() p
  for p in 1 2 3 4; do
    b+=("bucket=bucket_id:$((p - 1)),actions=mod_dl_dst:02:00:00:00:20:0$((2 * p - 1)),output:$((p + 1))")
  done
  local IFS=,
  "${of[@]}" add-group "unix:$work/ovs/br0.mgmt" \
    "group_id=1,type=select,selection_method=hash,fields(ip_src,ip_dst,nw_proto,udp_src,udp_dst),${b[*]}" &&
  "${of[@]}" add-flow "unix:$work/ovs/br0.mgmt" \
    "priority=10,ip,nw_dst=10.0.0.0/8,actions=dec_ttl,mod_dl_src:02:00:00:00:01:00,group:1"
}
# One line per call: the time and the packets the four uplinks have sent (the datapath's counters).
ovs_sample() {
  local t n
  t=$(date +%s.%N)
  n=$(ovs-ofctl dump-ports "unix:$work/ovs/br0.mgmt" 2>/dev/null |
      awk '/port +[2-5]:/ {p = 1; next} p && /tx pkts=/ {sub(/.*tx pkts=/, ""); s += $0 + 0; p = 0} END {print s + 0}')
  echo "ovs-tx $t $n"
}

# Runs "$@" in the background, logging to $log, until its rate is steady or $secs pass.
run_until_steady() {
  local kind=$1 log=$2 flows=0; shift 2
  # appending: the bench's own samples of OVS's counters go to the same log
  "$@" >> "$log" 2>&1 0<> "$work/stdin" &
  local pid=$! start=$SECONDS launched=$SECONDS
  cur=$pid
  while kill -0 "$pid" 2>/dev/null && (( SECONDS - start < secs )); do
    sleep 1
    if [[ $kind == ovs ]]; then
      # the bridge's management socket appears once ovs-vswitchd has set DPDK up and read the
      # database (tens of seconds on a loaded machine)
      if (( !flows )) && [[ -S $work/ovs/br0.mgmt ]] && ovs_flows >> "$log" 2>&1; then flows=1; fi
      (( flows )) && ovs_sample >> "$log"
    fi
    local rc=0
    /usr/bin/python3 bench/forward_report.py --steady "$kind" "$log" || rc=$?
    (( rc == 0 )) && break
    if (( rc == 2 )); then
      # no rate yet: start-up (EAL, zeroing memory, loading the capture) is not the run's time
      (( SECONDS - launched < 180 )) || { echo "forward.sh: $kind gave no rate in 180 s" >&2; break; }
      start=$SECONDS
    fi
  done
  if [[ $kind == ovs ]]; then
    ovs-appctl -t "$work/ovs/vswitchd.ctl" exit > /dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  else
    kill -INT "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  cur=
}

[[ $with_ovs == 1 ]] && ovs_setup
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "testpmd and rocesw memory: $([[ $with_huge == 1 ]] && echo "2 MiB hugepages" || echo "4 KiB pages (--no-huge)")"
for r in $(seq 1 "$rounds"); do
  run_until_steady testpmd "$work/testpmd.$r.log" dpdk-testpmd "${eal[@]}" --file-prefix bench-tp \
    --vdev "net_pcap0,rx_pcap=$work/mix.pcap,infinite_rx=1" --vdev "net_null1,no-rx=1" \
    -- --forward-mode=macswap --auto-start --stats-period 1 --total-num-mbufs=32768
  run_until_steady rocesw "$work/rocesw.$r.log" ./"${BENCH_BUILD:-build}"/rocesw-dataplane \
    "${eal[@]}" --file-prefix bench-rsw -- --config "$work/switch.yaml" --stats-period 1
  if [[ $with_ovs == 1 ]]; then
    run_until_steady ovs "$work/ovs.$r.log" "$ovs_bin" "unix:$ovs_db" --no-chdir \
      --unixctl="$work/ovs/vswitchd.ctl" --log-file="$work/ovs/vswitchd.$r.log"
  fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 bench/forward_report.py "$work" "$rounds"
