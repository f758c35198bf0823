#!/usr/bin/env bash
# The real-model table of BENCHMARKS.md (issue 39): PyTorch DDP on Gloo and through the switch (the switchml backend,
# DDP's own all-reduce, no hook), per model, on one host and (as root, RACK=1) in the emulated rack, on an otherwise
# idle machine. Every run's JSON rows go to OUT (default bench-models-<time>/rows.jsonl), then
# python/bench/model_table.py prints the table and draws OUT/speedup.svg. Which models, ranks, rates and steps:
#   ONE_HOST="resnet18,..."  WORKERS=2  STEPS=4          the one-host runs (empty ONE_HOST: none)
#   RACK=1 RACK_RUNS="1gbit:4:resnet50,vgg16 100mbit:4:mobilenet_v2"  RACK_STEPS=3   rate:ranks:models per rack run
# Run as: bench/models/measure.sh > out.txt 2>&1
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-bench-models-$(date -u +%Y%m%dT%H%M%S)}"
mkdir -p "$out"
rows="$out/rows.jsonl"
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
run() {  # the rows go to the file, progress and errors to the terminal
  ./switchml torch-train --hook none --format json --backend switchml,gloo "$@" >> "$rows" || echo "FAILED ($?): $*"
}

one_host="${ONE_HOST-resnet18,resnet50,vgg16,mobilenet_v2,bert_base,dlrm}"
if [ -n "$one_host" ]; then
  step "one host, ${WORKERS:-2} ranks: $one_host"
  run --workers "${WORKERS:-2}" --model "$one_host" --steps "${STEPS:-4}"
fi
if [ "${RACK:-0}" = 1 ]; then
  for spec in ${RACK_RUNS:-1gbit:4:resnet50,vgg16 100mbit:4:mobilenet_v2,resnet18}; do
    IFS=: read -r rate ranks models <<< "$spec"
    step "rack at $rate, $ranks ranks: $models"
    run --rack --rate "$rate" --workers "$ranks" --model "$models" --steps "${RACK_STEPS:-3}"
  done
fi
step "table"
/usr/bin/python3 python/bench/model_table.py --plot "$out/speedup.svg" "$rows"
