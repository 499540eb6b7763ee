#!/usr/bin/env python3
"""precond_plot.py - the plot of the preconditioner table (tests/gpu/precond.py's markdown, e.g. doc/precond-h100.md).

  precond_plot.py TABLE.md OUT.png     (does nothing, successfully, without matplotlib)

One group of bars per (problem, preconditioner): PCSetUp + KSPSolve of sellcuda, ellrt and pellr divided by
aijcusparse's in the same run (below 1: faster than aijcusparse); a missing bar is a type that cannot run that
preconditioner (sellcuda has no ILU, ICC or GAMG). Rows that did not converge are left out.
"""
import sys

TYPES = ("sellcuda", "ellrt", "pellr")


def main():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 0
    rows = {}
    for line in open(sys.argv[1]):
        f = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(f) < 10 or f[0] in ("problem", "---") or not f[7]:
            continue
        if "DIVERGED" in f[9]:
            continue
        rows.setdefault((f[0], f[1]), {})[f[2]] = float(f[7])
    groups = list(rows)
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(groups)), 4.5))
    w = 0.8 / len(TYPES)
    for k, t in enumerate(TYPES):
        xs = [i + (k - 1) * w for i, g in enumerate(groups) if t in rows[g]]
        ys = [rows[g][t] for g in groups if t in rows[g]]
        ax.bar(xs, ys, w, label=t)
    ax.axhline(1.0, color="k", ls="--", lw=1, label="aijcusparse")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{p}\n{pc}" for p, pc in groups], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("PCSetUp + KSPSolve / aijcusparse's")
    ax.set_title("Preconditioned CG (rtol 1e-8), H100, one run per bar")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
