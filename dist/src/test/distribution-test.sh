#!/usr/bin/env bash
# The distribution test (run by `mvn verify` in this module): both tarballs unpacked into a temporary
# directory outside the source tree, run with a PATH that holds no Maven and a HOME without ~/.m2. The
# switch server's lean distribution runs the switch; the full distribution's `switchml worker` runs
# three ranks of one job through it, each checking its results exactly (exit 2 otherwise).
set -euo pipefail
target="$1"
version="$2"
work="$(mktemp -d)"
switch_pid=""
cleanup() {
  if [ -n "$switch_pid" ]; then
    kill "$switch_pid" 2>/dev/null || true
    wait "$switch_pid" 2>/dev/null || true
  fi
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
if ls "$lean/lib" | grep -E -q 'spark|djl|pytorch|scala'; then
  echo "distribution-test: the switch server's distribution carries training libraries:" >&2
  ls "$lean/lib" | grep -E 'spark|djl|pytorch|scala' >&2
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

port=$(( 20000 + RANDOM % 20000 ))
# Not through run(): a function's subshell would be the background pid, and killing it would leave the
# switch running. env execs the launcher, which execs java, so $! is the switch's JVM itself.
env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" \
  "$lean/bin/switchml" switch --bind 127.0.0.1 --controller-bind 127.0.0.1 --port 0 --controller-port "$port" \
  > "$work/switch.log" 2>&1 &
switch_pid=$!
for _ in $(seq 1 300); do
  grep -q "switchml switch ready" "$work/switch.log" && break
  kill -0 "$switch_pid" 2>/dev/null || { cat "$work/switch.log" >&2; echo "distribution-test: the switch exited" >&2; exit 1; }
  sleep 0.1
done
grep -q "switchml switch ready" "$work/switch.log" || { cat "$work/switch.log" >&2; echo "distribution-test: no ready line in 30 s" >&2; exit 1; }

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

# The same job again with rank, world size, job and switch only in the environment, as a launcher sets them.
pids=()
for rank in 0 1 2; do
  env -i PATH="$tools" HOME="$work/home" JAVA_HOME="$java_home" RANK="$rank" WORLD_SIZE=3 \
    SWITCHML_JOB=dist-env SWITCHML_CONTROLLER="127.0.0.1:$port" \
    "$full/bin/switchml" worker --size 256KiB --iters 2 --warmup 1 --verify > "$work/rank$rank.log" 2>&1 &
  pids+=($!)
done
await_ranks "${pids[@]}"
echo "distribution-test: 3 ranks given RANK, WORLD_SIZE, SWITCHML_JOB and SWITCHML_CONTROLLER only, verified"
if kill -0 "$switch_pid" 2>/dev/null; then
  kill "$switch_pid"
  wait "$switch_pid" 2>/dev/null || true
fi
switch_pid=""
if pgrep -f "$lean/lib" >/dev/null; then
  echo "distribution-test: a process of the unpacked switch is still running" >&2
  exit 1
fi

