#!/usr/bin/env bash
# What a joined job costs while it waits between all-reduces: a switch and N workers on this host,
# each worker running 4 KiB all-reduces with a pause before each. Every process's CPU time is read
# from /proc once a second; the figure per process is its lowest CPU use over any 5 s window, which
# falls inside a pause (the pauses are longer). Usage: bench/idle-cpu.sh [WORKERS] [PAUSE_MS] [TRANSPORT]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
workers="${1:-2}"
pause_ms="${2:-15000}"
transport="${3:-auto}"
controller_port=$((52000 + RANDOM % 1000))
udp_port=$((53000 + RANDOM % 1000))
./switchml --help >/dev/null # build first, outside the measurement
log="$(mktemp -d)"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$log"; }
trap cleanup EXIT
./switchml switch --bind 127.0.0.1 --controller-bind 127.0.0.1 --controller-port "$controller_port" --port "$udp_port" \
  >"$log/switch" 2>&1 &
pids+=($!)
until grep -q "switchml switch ready" "$log/switch"; do sleep 0.2; done
for ((r = 0; r < workers; r++)); do
  ./switchml worker --controller "127.0.0.1:$controller_port" --job idle --rank "$r" --workers "$workers" \
    --size 4KiB --warmup 1 --iters 3 --pause-ms "$pause_ms" --transport "$transport" >"$log/worker$r" 2>&1 &
  pids+=($!)
done
names=(switch)
for ((r = 0; r < workers; r++)); do names+=("worker$r"); done
hz="$(getconf CLK_TCK)"
samples="$log/samples"
# One line a second: the CPU ticks (utime + stime) of each process, until the workers are done.
while kill -0 "${pids[1]}" 2>/dev/null; do
  line=""
  for p in "${pids[@]}"; do
    line+=" $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo -1)"
  done
  echo "$line" >>"$samples"
  sleep 1
done
grep -h "^switchml" "$log"/worker* | head -"$workers" >&2 || true
grep -l "ipc\|shared-memory" "$log/worker0" >/dev/null && via="shared memory" || via="UDP"
echo "idle CPU over the best 5 s window (${workers} workers, transport ${transport}: ${via} by the worker's log):"
awk -v hz="$hz" -v names="${names[*]}" 'BEGIN { split(names, n, " ") }
  { for (i = 1; i <= NF; i++) t[NR, i] = $i; rows = NR; cols = NF }
  END {
    for (i = 1; i <= cols; i++) {
      best = -1
      for (r = 6; r <= rows; r++) {
        if (t[r, i] < 0 || t[r - 5, i] < 0) continue
        use = (t[r, i] - t[r - 5, i]) / hz / 5 * 100
        if (best < 0 || use < best) best = use
      }
      printf "  %-8s %5.2f %% of one core\n", n[i], best
    }
  }' "$samples"
