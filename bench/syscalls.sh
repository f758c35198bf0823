#!/usr/bin/env bash
# System calls per all-reduce, each side: a switch and N workers on this host, counted per process with
# perf's raw_syscalls:sys_enter tracepoint (in-kernel counting: the processes run at full speed). The job
# runs twice, with FEW and with MANY timed all-reduces after the same warm-up; the difference of the two
# counts, divided by MANY - FEW, is what one all-reduce costs, without start-up, join and warm-up (a
# barrier per all-reduce included, as bench times it). Needs perf (Debian: linux-perf) and root or
# kernel.perf_event_paranoid <= 1. Extra arguments go to each worker (--set udpSegmentation=off, ...).
# Usage: bench/syscalls.sh [WORKERS] [SIZE] [TRANSPORT] [worker options...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
workers="${1:-2}"
size="${2:-64MiB}"
transport="${3:-auto}"
shift $(($# < 3 ? $# : 3))
few=2
many=12
command -v perf >/dev/null || { echo "syscalls.sh: perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
perf stat -e raw_syscalls:sys_enter -x, -- true 2>/dev/null >/dev/null ||
  { echo "syscalls.sh: perf cannot count raw_syscalls:sys_enter here (run as root, or sysctl kernel.perf_event_paranoid=1)" >&2; exit 1; }
./switchml --help >/dev/null # build first, outside the measurement
log="$(mktemp -d)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$log"; }
trap cleanup EXIT

# One job of ITERS timed all-reduces; writes each process's count to $log/count-ITERS-NAME.
run() {
  local iters="$1" controller_port=$((52000 + RANDOM % 1000)) udp_port=$((53000 + RANDOM % 1000)) r
  shift
  pids=()
  ./switchml switch --bind 127.0.0.1 --controller-bind 127.0.0.1 --controller-port "$controller_port" \
    --port "$udp_port" >"$log/switch-$iters" 2>&1 &
  pids+=($!)
  until grep -q "switchml switch ready" "$log/switch-$iters"; do
    kill -0 "${pids[0]}" 2>/dev/null || { cat "$log/switch-$iters" >&2; exit 1; }
    sleep 0.2
  done
  for ((r = 0; r < workers; r++)); do
    ./switchml worker --controller "127.0.0.1:$controller_port" --job "syscalls-$iters" --rank "$r" \
      --workers "$workers" --size "$size" --warmup 2 --iters "$iters" --transport "$transport" "$@" \
      >"$log/worker$r-$iters" 2>&1 &
    pids+=($!)
  done
  local counters=()
  # Each worker counted until it exits; the switch for as long as worker 0 runs.
  for ((r = 0; r < workers; r++)); do
    perf stat -e raw_syscalls:sys_enter -x, -o "$log/count-$iters-worker$r" -p "${pids[$((r + 1))]}" &
    counters+=($!)
  done
  perf stat -e raw_syscalls:sys_enter -x, -o "$log/count-$iters-switch" -p "${pids[0]}" -- \
    tail --pid="${pids[1]}" -f /dev/null
  for ((r = 1; r <= workers; r++)); do
    wait "${pids[$r]}" || { cat "$log/worker$((r - 1))-$iters" >&2; exit 1; }
  done
  wait "${counters[@]}" 2>/dev/null || true
  kill "${pids[0]}" 2>/dev/null || true
  wait "${pids[0]}" 2>/dev/null || true
}
count() { awk -F, '/raw_syscalls/ { print $1 }' "$log/count-$1-$2"; }

run "$few" "$@"
run "$many" "$@"
grep -h "^switchml" "$log/worker0-$many" >&2 || true
grep -ql "shared-memory" "$log/worker0-$many" && via="shared memory" || via="UDP"
echo "system calls per all-reduce of $size, $workers workers on this host, $via (($many - $few) all-reduces):"
for name in switch $(for ((r = 0; r < workers; r++)); do echo "worker$r"; done); do
  a="$(count "$few" "$name")"
  b="$(count "$many" "$name")"
  awk -v n="$name" -v a="$a" -v b="$b" -v d=$((many - few)) 'BEGIN { printf "  %-8s %10.0f\n", n, (b - a) / d }'
done
