#!/usr/bin/env python3
"""Bar chart of GB/s-eff per matrix and format from spmv's CSV (sweep rows left out).

usage: plot.py spmv.csv [spmv.png]     (does nothing, successfully, without matplotlib)
"""
import csv
import sys

def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "spmv.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is not importable; no plot")
        return 0
    rows = [r for r in csv.DictReader(open(src)) if "sweep" not in r["format"] and float(r["time_ms"]) > 0]
    if not rows:
        print("plot.py: no results in", src)
        return 0
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
    print("plot.py: wrote", dst)
    return 0

if __name__ == "__main__":
    sys.exit(main())
