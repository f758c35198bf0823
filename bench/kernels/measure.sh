#!/usr/bin/env bash
# The data path's measurements of BENCHMARKS.md section 25, in one run on an otherwise idle machine: the JMH kernels
# on the newest JDK and on 17, then the one-host bench, the main job and PyTorch DDP, each on this tree and (where
# BEFORE names a checkout of an earlier commit, built) on that tree in the same run; with RACK=1 (root) the rack's
# rows too. Prints everything to stdout; run as: bench/kernels/measure.sh > out.txt 2>&1
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
before="${BEFORE:-}"
jdk17=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
. dist/src/bin/switchml-java.sh
newest="$(switchml_select_java 21 999)"
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
bench() { "$@" 2>&1 | grep -E '^\{' ; }

if [ "${JMH:-1}" = 1 ]; then
  for jvm in "$newest" "$jdk17"; do
    step "JMH QuantizerBenchmark on $jvm"
    "$newest" -jar jmh/target/benchmarks.jar QuantizerBenchmark -jvm "$jvm" -p elements=15360 -p buffer=DIRECT \
      -p kernels=scalar,array,vector -p mixedBuffers=true,false -f 1 -wi 3 -w 1s -i 3 -r 1s -bm avgt 2>&1 | grep -E '^Quantizer|^Benchmark'
    step "JMH SwitchProgramBenchmark on $jvm"
    "$newest" -jar jmh/target/benchmarks.jar SwitchProgramBenchmark -jvm "$jvm" -p elements=15360 -p workers=2 \
      -p kernels=scalar,array,vector -f 1 -wi 3 -w 1s -i 3 -r 1s -bm avgt 2>&1 | grep -E '^SwitchProgram|^Benchmark'
  done
fi

trees=(.)
[ -n "$before" ] && trees+=("$before")
for tree in "${trees[@]}"; do
  step "one host, 64 MiB, n = 2, 4: $tree"
  bench "$tree/switchml" bench --algo switchml,ring --workers 2,4 --size 64MiB --iters 7 --verify --format json
  step "one host, 4 KiB warm, n = 4: $tree"
  bench "$tree/switchml" bench --algo switchml,ring --workers 4 --size 4KiB --iters 200 --warmup 300 --verify --format json
done
if [ "${KERNELS:-1}" = 1 ]; then
  for k in scalar array; do
    step "one host, 64 MiB, n = 4, SWITCHML_KERNELS=$k"
    SWITCHML_KERNELS=$k bench ./switchml bench --algo switchml --workers 4 --size 64MiB --iters 7 --verify --format json
  done
  step "one host, 64 MiB, n = 4, on JDK 17"
  SWITCHML_JAVA="$jdk17" bench ./switchml bench --algo switchml --workers 4 --size 64MiB --iters 7 --verify --format json
fi
for tree in "${trees[@]}"; do
  step "main job, 1 epoch, n = 4: $tree"
  for a in switchml ring; do
    "$tree/switchml" train --workers 4 --epochs 1 --aggregation $a --format json 2>/dev/null | grep -E '^\{' | cut -c1-400
  done
  step "PyTorch DDP, 2 ranks, 1 epoch: $tree"
  for b in switchml gloo; do
    "$tree/switchml" torch-train --workers 2 --epochs 1 --hook none --backend $b --format json 2>/dev/null | grep -E '^\{' | cut -c1-300
  done
done
if [ "${RACK:-0}" = 1 ]; then
  for tree in "${trees[@]}"; do
    step "rack 1 Gbit/s, MTU 9000, n = 4, 64 MiB: $tree"
    bench "$tree/switchml" bench --rack --rate 1gbit --mtu 9000 --workers 4 --size 64MiB --iters 3 --algo switchml,ring --verify --format json
    step "rack 1 Gbit/s, MTU 1500: $tree"
    bench "$tree/switchml" bench --rack --rate 1gbit --mtu 1500 --workers 4 --size 64MiB --iters 3 --algo switchml --verify --format json
    step "rack 400 Mbit/s, 4 switch hosts: $tree"
    bench "$tree/switchml" bench --rack --rate 400mbit --mtu 9000 --workers 4 --switch-hosts 4 --size 64MiB --iters 3 --algo switchml,ring --verify --format json
  done
fi
