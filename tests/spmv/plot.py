#!/usr/bin/env python3
"""Plots of spmv's CSV (sweep rows left out):

  DST (default <csv stem>.png)   bar chart of GB/s-eff per matrix and format, against the copy bandwidth
  <csv stem>-relative.png         each format's speed relative to the best cuSPARSE format of the same
                                  matrix (best cuSPARSE time / time; 1 = as fast, above = faster), one
                                  column of dots per matrix on a log scale, so small and large matrices
                                  read alike ("exhaustive" rows left out: the model-against-exhaustive
                                  table of spmv's log has them)

usage: plot.py spmv.csv [spmv.png]     (does nothing, successfully, without matplotlib)
"""
import csv
import math
import sys


def bandwidth_plot(plt, rows, dst):
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    formats = list(dict.fromkeys(r["format"] for r in rows))
    copy = float(rows[0]["copy_gbs"])
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(matrices)), 5))
    w = 0.8 / len(formats)
    for k, f in enumerate(formats):
        xs, ys = [], []
        for i, m in enumerate(matrices):
            v = [float(r["gbs_eff"]) for r in rows if r["matrix"] == m and r["format"] == f]
            if v:
                xs.append(i + (k - (len(formats) - 1) / 2) * w)
                ys.append(v[0])
        ax.bar(xs, ys, w, label=f)
    ax.axhline(copy, color="k", ls="--", lw=1, label="device-to-device copy")
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("GB/s-eff = (12 nnz + 4(n+1) + 8 ncols + 8 n) / time")
    ax.set_title("SpMV fp64 on %s" % rows[0]["device"])
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    plt.close(fig)
    print("plot.py: wrote", dst)


def relative_plot(matplotlib, plt, rows, dst):
    # recomputed from time_ms rather than read from ratio_best_cusparse, so that CSVs of older runs plot too
    rows = [r for r in rows if "exhaustive" not in r["format"]]
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    best = {}
    for r in rows:
        if r["format"].startswith("cuSPARSE"):
            t = float(r["time_ms"])
            best[r["matrix"]] = min(best.get(r["matrix"], t), t)
    matrices = [m for m in matrices if m in best]
    if not matrices:
        print("plot.py: no cuSPARSE results: no relative plot")
        return
    formats = list(dict.fromkeys(r["format"] for r in rows))
    cus = [f for f in formats if f.startswith("cuSPARSE")]
    eng = [f for f in formats if not f.startswith("cuSPARSE")]
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(matrices) + 3), 5.5))
    # cuSPARSE in greys and hollow (the reference), the engine's formats in colour and filled (what is read)
    greys = ["0.15", "0.4", "0.6", "0.75"]
    marks = "o^sDvP*Xh<>"
    colours = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C%d" % i for i in range(10)])
    w = 0.6 / max(1, len(formats))
    lo, hi = 1.0, 1.0
    for k, f in enumerate(cus + eng):
        xs, ys = [], []
        for i, m in enumerate(matrices):
            v = [float(r["time_ms"]) for r in rows if r["matrix"] == m and r["format"] == f]
            if v and v[0] > 0:
                xs.append(i + (k - (len(formats) - 1) / 2) * w)
                ys.append(best[m] / v[0])
        if not xs:
            continue
        lo, hi = min(lo, min(ys)), max(hi, max(ys))
        if f in cus:
            j = cus.index(f)
            ax.scatter(xs, ys, s=36, marker=marks[j % len(marks)], facecolors="none", edgecolors=greys[j % len(greys)], linewidths=1.3, label=f, zorder=3)
        else:
            j = eng.index(f)
            ax.scatter(xs, ys, s=46, marker=marks[j % len(marks)], color=colours[j % len(colours)], edgecolors="k", linewidths=0.4, label=f, zorder=4)
    ax.axhline(1.0, color="k", lw=1.2, zorder=2, label="best cuSPARSE")
    ax.set_yscale("log", base=2)
    # ticks at powers of 2 where the data reach, and finer near 1, where formats are close
    lo2, hi2 = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    lo2, hi2 = min(lo2, -1), max(hi2, 1)
    ticks = sorted([2.0 ** e for e in range(lo2, hi2 + 1)] + [0.75, 1.25, 1.5])
    ax.set_yticks(ticks)
    ax.set_yticklabels(["%.3g" % t for t in ticks])
    ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_ylim(2.0 ** lo2 * 0.9, 2.0 ** hi2 * 1.1)
    ax.yaxis.grid(True, color="0.9", zorder=0)
    for i in range(1, len(matrices)):
        ax.axvline(i - 0.5, color="0.92", lw=0.8, zorder=0)
    ax.set_xlim(-0.5, len(matrices) - 0.5)
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("speed relative to the best cuSPARSE format\n(best cuSPARSE time / time; above 1 = faster)")
    ax.set_title("SpMV fp64 on %s: relative to the best cuSPARSE format per matrix (no dot: refused or skipped)" % rows[0]["device"], fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    plt.close(fig)
    print("plot.py: wrote", dst)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "spmv.csv"
    stem = src.rsplit(".", 1)[0]
    dst = sys.argv[2] if len(sys.argv) > 2 else stem + ".png"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("plot.py: matplotlib is not importable; no plot")
        return 0
    rows = [r for r in csv.DictReader(open(src)) if "sweep" not in r["format"] and float(r["time_ms"]) > 0]
    if not rows:
        print("plot.py: no results in", src)
        return 0
    bandwidth_plot(plt, rows, dst)
    relative_plot(matplotlib, plt, rows, stem + "-relative.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
