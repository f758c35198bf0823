#!/usr/bin/env bash
# The distribution test (run by `mvn verify` in this module): both tarballs unpacked into a temporary
# directory outside the source tree, run with a PATH that holds no Maven and a HOME without ~/.m2. The
# switch server's lean distribution runs the switch; the full distribution's `switchml worker` runs
# three ranks of one job through it, each checking its results exactly (exit 2 otherwise); as root, again
# across network namespaces as hosts (a switch host, three worker hosts), by flags and by the environment alone.
set -euo pipefail
target="$1"
version="$2"
work="$(mktemp -d)"
switch_pid=""
# Network namespaces as hosts (created only as root): a fabric with a bridge, a switch host, three worker hosts.
ns_prefix="swdt$$"
namespaces=()
cleanup() {
  if [ -n "$switch_pid" ]; then
    kill "$switch_pid" 2>/dev/null || true
    wait "$switch_pid" 2>/dev/null || true
  fi
  for ns in "${namespaces[@]}"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

tar -xzf "$target/switchml-$version.tar.gz" -C "$work"
tar -xzf "$target/switchml-switch-$version.tar.gz" -C "$work"
full="$work/switchml-$version"
lean="$work/switchml-switch-$version"
for f in bin/switchml LICENSE NOTICE lib conf/spark-jvm.args conf/switchml-alerts.yml conf/switchml-dashboard.json \
    python/switchml_torch; do
  [ -e "$full/$f" ] || { echo "distribution-test: $f is missing from switchml-$version.tar.gz" >&2; exit 1; }
done
if ls "$lean/lib" | grep -E -q 'spark|djl|pytorch|scala|tensorflow'; then
  echo "distribution-test: the switch server's distribution carries training libraries:" >&2
  ls "$lean/lib" | grep -E 'spark|djl|pytorch|scala|tensorflow' >&2
  exit 1
fi

# Only what the launcher itself calls; no mvn anywhere on this PATH.
tools="$work/tools"
mkdir -p "$tools" "$work/home"
for t in bash env dirname readlink mkdir id cat; do
  ln -s "$(command -v "$t")" "$tools/$t"
done
java_home="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
run() {
  env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" "$@"
}
if run bash -c 'command -v mvn' >/dev/null; then
  echo "distribution-test: mvn is still reachable" >&2
  exit 1
fi

# Waits for the switch's ready line in $work/switch.log (30 s).
await_switch() {
  for _ in $(seq 1 300); do
    grep -q "switchml switch ready" "$work/switch.log" && return 0
    kill -0 "$switch_pid" 2>/dev/null || { cat "$work/switch.log" >&2; echo "distribution-test: the switch exited" >&2; exit 1; }
    sleep 0.1
  done
  cat "$work/switch.log" >&2
  echo "distribution-test: no ready line in 30 s" >&2
  exit 1
}

stop_switch() {
  if kill -0 "$switch_pid" 2>/dev/null; then
    kill "$switch_pid"
    wait "$switch_pid" 2>/dev/null || true
  fi
  switch_pid=""
}

port=$(( 20000 + RANDOM % 20000 ))
# Not through run(): a function's subshell would be the background pid, and killing it would leave the
# switch running. env execs the launcher, which execs java, so $! is the switch's JVM itself.
env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" \
  "$lean/bin/switchml" switch --bind 127.0.0.1 --controller-bind 127.0.0.1 --port 0 --controller-port "$port" \
  --metrics-port 0 > "$work/switch.log" 2>&1 &
switch_pid=$!
await_switch

# The metrics endpoint runs from the lean distribution's jars alone (its HTTP server is Netty's).
metrics_port=$(sed -n 's|^switchml switch metrics: http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$work/switch.log")
exec 3<>"/dev/tcp/127.0.0.1/$metrics_port"
printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
scraped=$(timeout 10 cat <&3 || true)
if ! grep -q '^switchml_jobs_installed ' <<<"$scraped"; then
  cat "$work/switch.log" >&2
  echo "distribution-test: the switch server's distribution does not serve /metrics" >&2
  exit 1
fi
exec 3<&-

# Waits for the three ranks whose pids are given; prints a failed rank's log.
await_ranks() {
  local status=0 i=0
  for pid in "$@"; do
    if ! wait "$pid"; then
      echo "distribution-test: rank $i failed:" >&2
      cat "$work/rank$i.log" >&2
      status=1
    fi
    i=$((i + 1))
  done
  [ "$status" -eq 0 ] || exit 1
  grep -h " yes " "$work"/rank*.log
}

pids=()
for rank in 0 1 2; do
  run "$full/bin/switchml" worker --controller "127.0.0.1:$port" --job dist-test --workers 3 --rank "$rank" \
    --size 256KiB --iters 2 --warmup 1 --verify > "$work/rank$rank.log" 2>&1 &
  pids+=($!)
done
await_ranks "${pids[@]}"
echo "distribution-test: 3 ranks from switchml-$version.tar.gz through switchml-switch-$version.tar.gz, verified"

can_namespace() {
  [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null
}

# Without root, the same job again here with rank, world size, job and switch only in the environment, as a
# launcher sets them (as root, the namespace hosts below do that across hosts).
if ! can_namespace; then
  pids=()
  for rank in 0 1 2; do
    env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" RANK="$rank" WORLD_SIZE=3 \
      SWITCHML_JOB=dist-env SWITCHML_CONTROLLER="127.0.0.1:$port" \
      "$full/bin/switchml" worker --size 256KiB --iters 2 --warmup 1 --verify > "$work/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  await_ranks "${pids[@]}"
  echo "distribution-test: 3 ranks given RANK, WORLD_SIZE, SWITCHML_JOB and SWITCHML_CONTROLLER only, verified"
fi
stop_switch

# Across hosts: the switch in one network namespace, each rank in its own, on a bridge (root only; CI runs
# as root). The workers are not on the switch's host, so they reach it over UDP, as on real hosts.
if ! can_namespace; then
  echo "distribution-test: skipped the run across network namespaces (needs root and iproute2)"
else
  fabric="$ns_prefix-fab"
  ip netns add "$fabric"
  namespaces+=("$fabric")
  ip -n "$fabric" link add br0 type bridge
  ip -n "$fabric" link set br0 up
  hosts=(sw w0 w1 w2)
  for i in 0 1 2 3; do
    host="$ns_prefix-${hosts[$i]}"
    ip netns add "$host"
    namespaces+=("$host")
    ip link add "dt$$h$i" type veth peer name eth0 netns "$host"
    ip link set "dt$$h$i" netns "$fabric"
    ip -n "$fabric" link set "dt$$h$i" master br0 up
    ip -n "$host" addr add "10.77.0.$((i + 1))/24" dev eth0
    ip -n "$host" link set eth0 up
    ip -n "$host" link set lo up
  done
  on() {
    local host="$1"
    shift
    ip netns exec "$ns_prefix-$host" env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" "$@"
  }
  # Not through on(): $! must be the switch's JVM (ip netns exec, env and the launcher exec it), as above.
  ip netns exec "$ns_prefix-sw" env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" \
    "$lean/bin/switchml" switch --bind 10.77.0.1 --controller-bind 10.77.0.1 --trusted-networks 10.77.0.0/16 \
    > "$work/switch.log" 2>&1 &
  switch_pid=$!
  await_switch
  pids=()
  for rank in 0 1 2; do
    on "w$rank" "$full/bin/switchml" worker --controller 10.77.0.1:50099 --job dist-hosts --workers 3 --rank "$rank" \
      --size 256KiB --iters 2 --warmup 1 --verify > "$work/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  await_ranks "${pids[@]}"
  echo "distribution-test: 3 ranks on 3 namespace hosts through the switch on a fourth, verified"
  pids=()
  for rank in 0 1 2; do
    on "w$rank" RANK="$rank" WORLD_SIZE=3 MASTER_ADDR=10.77.0.2 MASTER_PORT=29500 SWITCHML_CONTROLLER=10.77.0.1:50099 \
      "$full/bin/switchml" worker --size 256KiB --iters 2 --warmup 1 --verify > "$work/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  await_ranks "${pids[@]}"
  grep -q "job 'torch-10.77.0.2:29500'" "$work/switch.log" || { cat "$work/switch.log" >&2;
    echo "distribution-test: the ranks did not name their job from MASTER_ADDR:MASTER_PORT" >&2; exit 1; }
  echo "distribution-test: 3 namespace hosts given RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and SWITCHML_CONTROLLER only, verified"
  stop_switch
fi

if pgrep -f "$lean/lib" >/dev/null; then
  echo "distribution-test: a process of the unpacked switch is still running" >&2
  exit 1
fi

