#!/usr/bin/env bash
# The emulated rack (docs/ARCHITECTURE.md section 7): one network namespace per worker and one for the switch,
# joined by veth pairs to a Linux bridge in the switch namespace (a flat L2 segment, as behind a
# store-and-forward switch). Every link is shaped in both directions with tc tbf; optionally a
# fraction of UDP packets is dropped on every receiving side with nftables (this kernel has no
# netem). It runs `switchml switch` in the switch namespace and one `switchml worker` per worker
# namespace, prints each worker's table, and removes everything afterwards, also when interrupted.
#
#   bench/rack/rack.sh [--workers N] [--rate RATE] [--mtu MTU] [--drop PERCENT] [--switch-hosts K]
#                      [--jobs J] [--keep-logs DIR] [-- WORKER OPTIONS...]
#
# RATE is a tc rate (default 500mbit), PERCENT a drop percentage per receiving interface (e.g.
# 0.1), WORKER OPTIONS go to every `switchml worker` (default: --size 64MiB --iters 5 --verify).
# --switch-hosts 1 runs the switch on a server of its own behind one link shaped like a worker's;
# (a software switch; without it the switch sits on the bridge, as a switch chip); --switch-hosts K
# runs K such servers and shards each job over them. --jobs J splits the workers into J jobs of
# N / J workers that run at the same time through the same switch (to see how they share its link). Needs root, iproute2 (ip, tc) and, with --drop,
# nftables.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
workers=4
rate=500mbit
mtu=9000
drop=""
switch_hosts=0
jobs=1
logs=""
prefix="smlrack$$"
subnet=10.77.0

while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --mtu) mtu="$2"; shift 2 ;;
    --drop) drop="$2"; shift 2 ;;
    --switch-hosts) switch_hosts="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep-logs) logs="$2"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "rack: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
worker_args=("$@")
[ ${#worker_args[@]} -gt 0 ] || worker_args=(--size 64MiB --iters 5 --verify)

if [ "$(id -u)" -ne 0 ]; then
  echo "rack: needs root to create network namespaces, veth pairs and tc/nftables rules (try sudo)" >&2
  exit 1
fi
for tool in ip tc; do
  command -v "$tool" >/dev/null || { echo "rack: $tool is missing (apt-get install iproute2)" >&2; exit 1; }
done
if [ -n "$drop" ] && ! command -v nft >/dev/null; then
  echo "rack: --drop needs nftables (apt-get install nftables)" >&2; exit 1
fi
if ! [[ "$workers" =~ ^[0-9]+$ ]] || [ "$workers" -lt 1 ] || [ "$workers" -gt 200 ]; then
  echo "rack: --workers must be 1..200" >&2; exit 2
fi
if ! [[ "$switch_hosts" =~ ^[0-9]+$ ]]; then
  echo "rack: --switch-hosts must be a number of hosts, at least 1 (leave it out for the switch on the fabric)" >&2
  exit 2
fi
if [ "$switch_hosts" -gt 16 ]; then
  echo "rack: --switch-hosts $switch_hosts: the rack shards the switch over at most 16 hosts" >&2; exit 2
fi
if ! [[ "$jobs" =~ ^[0-9]+$ ]] || [ "$jobs" -lt 1 ] || [ $((workers % jobs)) -ne 0 ]; then
  echo "rack: --jobs must be at least 1 and divide --workers ($workers)" >&2; exit 2
fi

fabric="$prefix-sw"
switch_count=$(( switch_hosts > 0 ? switch_hosts : 1 ))
switch_ns() { # switch index: the namespace its process runs in
  if [ "$switch_hosts" -eq 0 ]; then echo "$fabric"; else echo "$prefix-sh$1"; fi
}
switch_address() { # switch index: .254 for the first, then downwards
  echo "$subnet.$((254 - $1))"
}
pids=()
workdir="$(mktemp -d)"

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for ns in $(ip netns list | awk '{print $1}' | grep "^$prefix-" || true); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -n "$logs" ]; then mkdir -p "$logs" && cp "$workdir"/*.log "$logs"/ 2>/dev/null || true; fi
  rm -rf "$workdir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Build once, outside the namespaces, so the processes below only run it.
"$root/switchml" --version >/dev/null

# tbf needs a burst of at least max(rate x 1 ms, 128 KiB): smaller bursts split GSO sends into
# single frames with a timer each and the whole rack becomes CPU-bound (docs/ARCHITECTURE.md section 7).
rate_bps="$(python3 -c "
import re,sys
m=re.fullmatch(r'([0-9.]+)([kmg]?)(bit|bps)?', sys.argv[1].lower())
if not m: sys.exit('rack: cannot read rate ' + sys.argv[1])
v=float(m.group(1))*{'':1,'k':1e3,'m':1e6,'g':1e9}[m.group(2)]
print(int(v*8 if m.group(3)=='bps' else v))" "$rate")"
burst=$(( rate_bps / 8 / 1000 ))
[ "$burst" -ge 131072 ] || burst=131072

shape() { # namespace, interface, queue latency
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency "$3"
}
drop_udp() { # namespace
  [ -n "$drop" ] || return 0
  local per10k
  per10k="$(python3 -c "import sys; print(round(float(sys.argv[1]) * 100))" "$drop")"
  ip netns exec "$1" nft -f - <<NFT
table inet rack {
  chain input {
    type filter hook input priority 0; policy accept;
    meta l4proto udp numgen random mod 10000 < $per10k drop
  }
}
NFT
}

attach() { # namespace, temporary name tag, bridge port, address: a host on the bridge, its link shaped both ways
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip link add "${prefix}a$2" mtu "$mtu" type veth peer name "${prefix}b$2" mtu "$mtu"
  ip link set "${prefix}a$2" netns "$1"
  ip link set "${prefix}b$2" netns "$fabric"
  ip -n "$1" link set "${prefix}a$2" name eth0
  ip -n "$fabric" link set "${prefix}b$2" name "$3"
  ip -n "$1" addr add "$4/24" dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$fabric" link set "$3" master br0 up
  shape "$1" eth0 20ms       # the host's NIC pushes back rather than drops
  shape "$fabric" "$3" 5ms   # a switch port's buffer
  drop_udp "$1"
}

ip netns add "$fabric"
ip -n "$fabric" link set lo up
ip -n "$fabric" link add br0 type bridge
ip -n "$fabric" link set br0 mtu "$mtu" up
if [ "$switch_hosts" -eq 0 ]; then
  ip -n "$fabric" addr add "$subnet.254/24" dev br0
  drop_udp "$fabric"
else
  for ((k = 0; k < switch_hosts; k++)); do
    attach "$(switch_ns "$k")" "s$k" "s$k" "$(switch_address "$k")"   # a switch server, behind one link like a worker's
  done
fi
for ((i = 0; i < workers; i++)); do
  attach "$prefix-w$i" "$i" "p$i" "$subnet.$((i + 1))"
done

topology=fabric
[ "$switch_hosts" -eq 0 ] || topology="$switch_hosts-host (switch on $switch_hosts server(s) behind one link each)"
echo "rack: $workers workers in $jobs job(s), links $rate (tbf burst $burst B), MTU $mtu, switch: $topology${drop:+, UDP drop $drop % per receiving side}"
controllers=()
for ((k = 0; k < switch_count; k++)); do
  address="$(switch_address "$k")"
  # The rack's namespaces reach it from the rack only: it trusts their networks (no protected mode).
  ip netns exec "$(switch_ns "$k")" "$root/switchml" switch --bind "$address" --controller-bind "$address" \
    --trusted-networks on > "$workdir/switch$k.log" 2>&1 &
  pid=$!
  pids+=($pid)
  for _ in $(seq 1 300); do
    grep -q "switchml switch ready" "$workdir/switch$k.log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$workdir/switch$k.log" >&2; echo "rack: switch $k did not start" >&2; exit 1; }
    sleep 0.1
  done
  grep -q "switchml switch ready" "$workdir/switch$k.log" || { echo "rack: switch $k did not get ready in 30 s" >&2; exit 1; }
  controllers+=("$address:50099")
done
# One switch: its controller; several: the job sharded over them (docs/operating.md, A sharded switch).
switch_args=(--controller "${controllers[0]}")
if [ "$switch_count" -gt 1 ]; then
  switch_args=(--set "shards=$(IFS=';'; echo "${controllers[*]}")")
fi

worker_pids=()
per_job=$((workers / jobs))
for ((i = 0; i < workers; i++)); do
  job=rack
  [ "$jobs" -eq 1 ] || job="rack$((i / per_job))"
  ip netns exec "$prefix-w$i" "$root/switchml" worker "${switch_args[@]}" --job "$job" \
    --workers "$per_job" --rank "$((i % per_job))" --local-address "$subnet.$((i + 1))" "${worker_args[@]}" \
    > "$workdir/worker$i.log" 2>&1 &
  pids+=($!)
  worker_pids+=($!)
done
status=0
for pid in "${worker_pids[@]}"; do wait "$pid" || status=1; done
for ((i = 0; i < workers; i++)); do
  echo "--- worker $i (job $([ "$jobs" -eq 1 ] && echo rack || echo "rack$((i / per_job))"), $topology)"
  cat "$workdir/worker$i.log"
done
[ "$status" -eq 0 ] || echo "rack: a worker failed (see above)" >&2
exit "$status"
