"""The per-test table of two torch_suite.py runs, switchml's and Gloo's (their --record files), in Markdown:

    python python/bench/torch_suite_table.py SWITCHML.jsonl GLOO.jsonl

First the counts of each outcome on each backend, then one row per test whose outcome differs between the two, then
(with --all) every test. A test one run did not reach (cut short) reads "not run"."""

import collections
import json
import sys


def read(path):
    outcomes = {}
    with open(path) as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                outcomes[row["test"]] = (row["outcome"], row.get("detail", ""))
    return outcomes


def cell(result):
    outcome, detail = result
    detail = detail.replace("|", "\\|").replace("\n", " ")
    return "%s (%s)" % (outcome, detail) if detail else outcome


def main(argv):
    every = "--all" in argv
    switchml_path, gloo_path = [a for a in argv if a != "--all"]
    switchml, gloo = read(switchml_path), read(gloo_path)
    tests = sorted(set(switchml) | set(gloo))
    missing = ("not run", "")
    print("| outcome | switchml | Gloo |\n|---|---|---|")
    counts = [collections.Counter(r[0] for r in run.values()) for run in (switchml, gloo)]
    for outcome in sorted(set(counts[0]) | set(counts[1])):
        print("| %s | %d | %d |" % (outcome, counts[0][outcome], counts[1][outcome]))
    print("| tests | %d | %d |" % (len(switchml), len(gloo)))
    rows = [t for t in tests if every or switchml.get(t, missing)[0] != gloo.get(t, missing)[0]]
    print("\n| test | switchml | Gloo |\n|---|---|---|")
    for test in rows:
        print("| `%s` | %s | %s |" % (test, cell(switchml.get(test, missing)), cell(gloo.get(test, missing))))


if __name__ == "__main__":
    main(sys.argv[1:])
