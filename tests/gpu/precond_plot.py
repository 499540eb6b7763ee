#!/usr/bin/env python3
"""precond_plot.py - the plot of the preconditioner table (tests/gpu/precond.py's markdown, e.g. doc/precond-h100.md).

  precond_plot.py TABLE.md OUT.png     (does nothing, successfully, without matplotlib)

One group of bars per (problem, preconditioner): PCSetUp + KSPSolve of sellcuda, ellrt and pellr divided by
aijcusparse's (below 1: faster than aijcusparse); with several runs per row the bar is the ratio of the medians and
the error bar the range over repetitions of the ratio within one repetition. A missing bar is a type that cannot run
that preconditioner (sellcuda has no ILU, ICC or GAMG). Rows that did not converge are left out.
"""
import re
import sys

TYPES = ("sellcuda", "ellrt", "pellr")
RATIO = "PCSetUp+KSPSolve / aijcusparse"


def cell(s):
    """'0.92 (0.90-0.95)' or '0.92' -> (value, low, high); None for an empty cell."""
    m = re.match(r"([0-9.]+)(?:\s*\(([0-9.]+)-([0-9.]+)\))?$", s)
    if not m:
        return None
    v = float(m.group(1))
    return v, float(m.group(2) or v), float(m.group(3) or v)


def read(path):
    """(rows {(problem, PC): {type: (value, low, high)}}, the device, runs per row) from the markdown table."""
    rows, col, its, device, runs = {}, None, None, "", "one run"
    for line in open(path):
        c = re.match(r"<!-- tests/gpu/precond.sh; (?:([^,]+), driver)?.*; (one run|\d+ runs|\d+-\d+ runs) per row", line)
        if c:
            device, runs = c.group(1) or "", c.group(2)
            continue
        if not line.startswith("|"):
            continue
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if f[0] == "problem":  # the columns by name: the table has gained columns over time
            col, its = f.index(RATIO), f.index("its")
            continue
        if col is None or len(f) <= max(col, its) or f[0].startswith("---"):
            continue
        r = cell(f[col])
        if r is None or "DIVERGED" in f[its]:
            continue
        rows.setdefault((f[0], f[1]), {})[f[2]] = r
    return rows, device, runs


def main():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 0
    rows, device, runs = read(sys.argv[1])
    groups = list(rows)
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(groups)), 4.5))
    w = 0.8 / len(TYPES)
    for k, t in enumerate(TYPES):
        xs = [i + (k - 1) * w for i, g in enumerate(groups) if t in rows[g]]
        vs = [rows[g][t] for g in groups if t in rows[g]]
        ys = [v for v, _, _ in vs]
        err = [[v - lo for v, lo, _ in vs], [hi - v for v, _, hi in vs]]
        ax.bar(xs, ys, w, label=t, yerr=err if any(map(any, err)) else None, capsize=2, error_kw={"lw": 0.8})
    ax.axhline(1.0, color="k", ls="--", lw=1, label="aijcusparse")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{p}\n{pc}" for p, pc in groups], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("PCSetUp + KSPSolve / aijcusparse's")
    per = "one run per bar" if runs == "one run" else f"median of {runs}, range over repetitions"
    ax.set_title(f"Preconditioned CG (rtol 1e-8), {device or 'H100'}, {per}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
