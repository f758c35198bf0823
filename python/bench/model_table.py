"""The side-by-side table of python/bench/models.py's runs: for each model, rank count and link rate, the step time
through Gloo and through each other aggregation (the switch, a hook), the speedup (Gloo's step time / the other's, as
SwitchML's paper reports it), the share of the step with an all-reduce in flight, the loss after the last step on
each and how far apart they are, and whether every rank ended with the same parameters on every run.

Reads the JSON rows that `switchml torch-train --model ... --format json` (or models.py --format json) prints, from
files or standard input; `switchml torch-train --model NAME --backend switchml,gloo` runs both and prints this table.
`--plot FILE.svg` also draws the speedup per model, one bar per aggregation, rank count and rate, as the paper's
figure does.
Exit code 2 when a run's ranks ended with different parameters."""

import argparse
import json
import sys
from collections import OrderedDict

REFERENCE = "gloo"


def read_rows(streams):
    """The JSON objects of these streams, one per line; other lines (progress, tables) are skipped."""
    rows = []
    for stream in streams:
        for line in stream:
            line = line.strip()
            if line.startswith("{"):
                row = json.loads(line)
                if "model" in row and "step_seconds" in row:
                    rows.append(row)
    return rows


def rate_text(bps):
    if not bps:
        return "one host"
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return "%g %s" % (bps / scale, unit)
    return "%d bit/s" % bps


def setting(row):
    """What a comparison holds fixed: the model, the ranks and the links' rate."""
    return row["model"], row["workers"], row.get("rate_bps") or 0


def aggregation(row):
    """How a run summed its gradients: the backend's own all-reduce (gloo, switchml), or a hook's (its name)."""
    hook = row.get("hook", "none")
    return row["aggregation"] if hook in ("none", "gloo") else hook + " hook"


def comparisons(rows):
    """One comparison per setting and aggregation other than Gloo's: (setting, Gloo's row or None, the other row).
    A setting measured twice on one aggregation keeps the last run."""
    by_setting = OrderedDict()
    for row in rows:
        by_setting.setdefault(setting(row), OrderedDict())[aggregation(row)] = row
    result = []
    for key, runs in by_setting.items():
        reference = runs.get(REFERENCE)
        others = [r for a, r in runs.items() if a != REFERENCE]
        if not others and reference is not None:
            result.append((key, reference, None))
        for other in others:
            result.append((key, reference, other))
    return result


def speedup(reference, other):
    if reference is None or other is None or other["step_seconds"] <= 0:
        return None
    return reference["step_seconds"] / other["step_seconds"]


def loss_gap(reference, other):
    """The other run's loss after the last step against Gloo's, relative to Gloo's."""
    if reference is None or other is None or reference["loss"] == 0:
        return None
    return (other["loss"] - reference["loss"]) / abs(reference["loss"])


def table(rows):
    lines = ["| model | parameters | gradients | ranks | links | aggregation | step, Gloo | step | speedup"
             " | samples/s | comm share | loss@N, Gloo | loss@N | loss gap | parameters identical"
             " | CPU-s per step, Gloo | CPU-s per step |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def seconds(row):
        return "-" if row is None else "%.3f s" % row["step_seconds"]

    def loss(row):
        return "-" if row is None else "%.4f" % row["loss"]

    def cpu(row):  # the whole machine's busy CPU-seconds per timed step (models.py's cpu_seconds_per_step)
        return "-" if row is None or row.get("cpu_seconds_per_step") is None else "%.2f" % row["cpu_seconds_per_step"]

    for (model, workers, rate), reference, other in comparisons(rows):
        shown = other or reference
        ratio, gap = speedup(reference, other), loss_gap(reference, other)
        share = shown.get("aggregation_fraction")
        identical = all(r["parameters_identical"] for r in (reference, other) if r is not None)
        lines.append("| %s | %.1f M | %.1f MB | %d | %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
            model, shown["parameters"] / 1e6, shown["gradient_bytes"] / 1e6, workers, rate_text(rate),
            aggregation(other) if other is not None else "-", seconds(reference), seconds(other),
            "-" if ratio is None else "%.2fx" % ratio, shown["samples_per_s"],
            "n/a" if share is None else "%.0f %%" % (100 * share), loss(reference), loss(other),
            "-" if gap is None else "%+.2f %%" % (100 * gap), "yes" if identical else "NO", cpu(reference), cpu(other)))
    return "\n".join(lines)


def plot(rows, path):
    """An SVG bar chart: speedup over Gloo per model, one bar per aggregation, rank count and rate, a line at 1."""
    bars = [((key[0], aggregation(other), key[1], key[2]), speedup(reference, other))
            for key, reference, other in comparisons(rows) if speedup(reference, other) is not None]
    if not bars:
        raise SystemExit("--plot: no model was measured on Gloo and on another aggregation")
    models = list(OrderedDict.fromkeys(key[0] for key, _ in bars))
    series = list(OrderedDict.fromkeys(key[1:] for key, _ in bars))
    speedups = dict(bars)
    colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"]
    top = max(2.0, max(speedups.values()) * 1.1)
    bar, left, bottom = 18, 50, 260
    width = max(480, left + 20 + len(models) * (len(series) * bar + 24))
    scale = (bottom - 30) / top
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (width, bottom + 40 + 18 * len(series)),
           '<text x="%d" y="16" font-size="13">Training step speedup over Gloo (Gloo step time / step time)</text>'
           % left]
    for tick in range(int(top) + 1):
        y = bottom - tick * scale
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>' % (
            left, width - 10, y, y, "#000" if tick == 1 else "#ddd"))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%dx</text>' % (left - 4, y + 4, tick))
    x = left + 12
    for model in models:
        for i, (name, workers, rate) in enumerate(series):
            s = speedups.get((model, name, workers, rate))
            if s is not None:
                out.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s, %s, %d ranks, %s: '
                           '%.2fx</title></rect>' % (x + i * bar, bottom - s * scale, bar - 2, s * scale,
                                                     colours[i % len(colours)], model, name, workers, rate_text(rate), s))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x + len(series) * bar / 2, bottom + 16,
                                                                            model))
        x += len(series) * bar + 24
    for i, (name, workers, rate) in enumerate(series):
        y = bottom + 40 + 18 * i
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (left, y - 10, colours[i % len(colours)]))
        out.append('<text x="%d" y="%d">%s, %d ranks, %s</text>' % (left + 18, y, name, workers, rate_text(rate)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="files of JSON rows (default: standard input)")
    ap.add_argument("--plot", metavar="FILE.svg", help="also draw the speedups into this SVG file")
    args = ap.parse_args(argv)
    streams = [open(f) for f in args.files] if args.files else [sys.stdin]
    try:
        rows = read_rows(streams)
    finally:
        for s in streams:
            if s is not sys.stdin:
                s.close()
    if not rows:
        raise SystemExit("no rows of python/bench/models.py (run it, or switchml torch-train --model, with --format json)")
    print(table(rows))
    if args.plot:
        plot(rows, args.plot)
        print("plot: " + args.plot)
    return 0 if all(r["parameters_identical"] for r in rows) else 2


if __name__ == "__main__":
    sys.exit(main())
