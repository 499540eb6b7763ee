#!/usr/bin/env python3
"""Plot of spmm's CSV: for each matrix, the speed of each format relative to cuSPARSE's CSR ALG1 SpMM (what
aijcusparse's MatMatMult runs; 1 = as fast, above = faster) against the number of columns k, log-2 axis.

usage: plot.py spmm.csv [spmm.png]     (does nothing, successfully, without matplotlib)
"""
import csv
import re
import sys


def series(fmt):
    """One line per choice: the default's rows (one-vector product at k = 1, the one-pass kernel above) joined."""
    if "default" in fmt:
        return fmt.split()[0] + " (default)"
    return re.sub(r", \d+ one-vector products", ", one product per column", fmt)


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not found: no plot")
        return 0
    rows = list(csv.DictReader(open(src)))
    if not rows:
        print("no rows in %s" % src)
        return 0
    matrices = list(dict.fromkeys(r["matrix"] for r in rows))
    for r in rows:
        r["series"] = series(r["format"])
    names = list(dict.fromkeys(r["series"] for r in rows))
    fig, axes = plt.subplots(1, len(matrices), figsize=(5.5 * len(matrices), 4.8), squeeze=False)
    for ax, m in zip(axes[0], matrices):
        for i, f in enumerate(names):
            pts = sorted((int(r["k"]), float(r["x_alg1"])) for r in rows if r["matrix"] == m and r["series"] == f)
            if pts:
                style = "--" if f.startswith("pellr") else "-"
                width = 2.5 if "default" in f else 1.0
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", lw=width, label=f, color="C%d" % (i % 10))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("columns of B (k)")
        ax.set_ylabel("cuSPARSE CSR ALG1 time / time")
        ax.set_title("%s, %s" % (m, rows[0]["device"]), fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    print("wrote %s" % dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
