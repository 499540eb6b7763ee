#!/usr/bin/env python3
"""memory_plot.py - the tables and the plot of tests/gpu/memory.sh.

  memory_plot.py CSV... [--png OUT.png] [--device NAME]

CSVs: memory.csv (one row per run: grid, type, solver, the readings of tests/gpu/memory) and memory_search.csv (one
row per probe of the budget search), told apart by their columns; several of each are read as one (runs split across
calls).  Prints Markdown on stdout; writes OUT.png (default: memory.png beside the first CSV) with matplotlib's Agg
backend, or nothing, successfully, without matplotlib.

Per grid, one row per type and solver: the plugin's GPU storage of the matrix (MatELLRGetDeviceBytes; "-" where the
plugin is not loaded or the matrix has none), whether aijcusparse's own device CSR was made (MatCUSPARSCopyTo ran;
its size, 12 nnz + 4 (rows + 1) bytes for 32-bit indices; with GAMG the count includes the copies of the coarse
matrices and interpolations, which are aijcusparse matrices whatever A's type), the used memory after the assembly and after KSPSetUp, the
peak (all above the process's baseline: CUDA context and PETSc's device set-up), the peak divided by aijcusparse's
with the same solver and grid, in which step the peak was seen, iterations and the converged reason.  All in MB
(10^6 bytes).  Then the search: per type and solver, the largest grid that solved within the budget and the smallest
that did not.
"""
import csv
import os
import sys

TYPES = ("aijcusparse", "sellcuda", "ellrt", "pellr")
SOLVERS = ("cg+jacobi", "cgdevice+jacobi", "gmres+ilu", "cg+gamg")


def num(s):
    """A CSV number; None for an empty or unreadable cell."""
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def order(values, known):
    """The known names first, in their order, then the others as they come."""
    seen = [v for v in known if v in values]
    return seen + [v for v in values if v not in seen]


def read(paths):
    """(runs, probes): the rows of the run CSVs and of the search CSVs, as dicts."""
    runs, probes = [], []
    for p in paths:
        with open(p, newline="") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        (probes if "budget_mb" in rows[0] else runs).extend(rows)
    return runs, probes


def mb(v, digits=None):
    """MB with one decimal below 100 MB, none above (unless DIGITS says)."""
    if v is None:
        return ""
    if digits is None:
        digits = 1 if abs(v) < 100 else 0
    return f"{v:.{digits}f}"


def csr_mb(r):
    """aijcusparse's device CSR (values, 32-bit column indices, row offsets) in MB, from the row's counts."""
    nnz, rows = num(r.get("nnz")), num(r.get("rows"))
    if nnz is None or rows is None:
        return None
    return (12 * nnz + 4 * (rows + 1)) / 1e6


def run_table(runs):
    out = []
    grids = sorted({int(r["grid"]) for r in runs})
    for n in grids:
        at = [r for r in runs if int(r["grid"]) == n]
        ok = [r for r in at if r["status"] == "ok"]
        head = f"### n = {n} ({n}^3"
        if ok and num(ok[0]["rows"]) and num(ok[0]["nnz"]):
            head += f" = {num(ok[0]['rows']) / 1e6:.2f}M rows, {num(ok[0]['nnz']) / 1e6:.1f}M nonzeros"
        out.append(head + ")")
        out.append("")
        out.append("| type | solver | ELLR storage MB | cuSPARSE CSR made | after assembly MB | after KSPSetUp MB | peak MB | peak / aijcusparse | peak in | its | reason | set-up + first solve s | second solve s |")
        out.append("|---|---|---:|---|---:|---:|---:|---:|---|---:|---|---:|---:|")
        ref = {r["solver"]: num(r["peak_mb"]) for r in ok if r["type"] == "aijcusparse"}
        solvers = order(list(dict.fromkeys(r["solver"] for r in at)), SOLVERS)
        types = order(list(dict.fromkeys(r["type"] for r in at)), TYPES)
        for s in solvers:
            for t in types:
                for r in (r for r in at if r["type"] == t and r["solver"] == s):
                    if r["status"] != "ok":
                        out.append(f"| {t} | {s} | | | | | | | | | failed: {r.get('error', '')} |")
                        continue
                    e = num(r["ellr_mb"])
                    ellr = "-" if e is None or e < 0 or (e == 0 and t not in ("ellrt", "pellr")) else mb(e, 1)
                    copies = int(num(r["cusparse_copies"]) or 0)
                    if copies == 0:
                        made = "no"
                    elif "gamg" in s:  # the hierarchy's matrices are aijcusparse matrices of their own
                        made = f"{copies} copies (A and the hierarchy)"
                    else:
                        made = f"yes{f' x{copies}' if copies > 1 else ''} ({mb(csr_mb(r))} MB)"
                    peak, base = num(r["peak_mb"]), ref.get(s)
                    ratio = f"{peak / base:.2f}" if peak is not None and base else ""
                    its = r["its"] if r["its"] else ""
                    out.append(f"| {t} | {s} | {ellr} | {made} | {mb(num(r['assembled_mb']))} | {mb(num(r['setup_mb']))} | "
                               f"{mb(peak)} | {ratio} | {r['peak_at']} | {its} | {r['reason']} | {r.get('first_s', '')} | {r.get('solve2_s', '')} |")
        out.append("")
    return out


def search_table(probes):
    out = []
    combos = list(dict.fromkeys((p["type"], p["solver"], p["budget_mb"]) for p in probes))
    if not combos:
        return out
    out.append("### The largest grid within the budget")
    out.append("")
    out.append("Bisection on n, each probe a fresh process whose ballast leaves the budget free on the GPU before PETSc starts; "
               "a probe solved when it ran to the end (20 iterations).")
    out.append("")
    out.append("| type | solver | budget MB | largest n solved | rows | peak MB there | smallest n failed | why | probes |")
    out.append("|---|---|---:|---:|---:|---:|---:|---|---:|")
    for t, s, budget in combos:
        ps = [p for p in probes if (p["type"], p["solver"], p["budget_mb"]) == (t, s, budget)]
        good = [p for p in ps if p["status"] == "ok"]
        best = max(good, key=lambda p: int(p["n"])) if good else None
        above = [p for p in ps if p["status"] != "ok" and (best is None or int(p["n"]) > int(best["n"]))]
        fail = min(above, key=lambda p: int(p["n"])) if above else None
        if best is None:
            largest, rows, peak = f"< {min(int(p['n']) for p in ps)}", "", ""
        else:
            largest, rows, peak = best["n"], f"{int(best['n']) ** 3 / 1e6:.2f}M", mb(num(best["peak_mb"]))
            if fail is None:
                largest = f">= {best['n']}"
        out.append(f"| {t} | {s} | {budget} | {largest} | {rows} | {peak} | {fail['n'] if fail else ''} | "
                   f"{fail.get('error', '') if fail else ''} | {len(ps)} |")
    out.append("")
    return out


def plot(runs, path, device):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    grids = sorted({int(r["grid"]) for r in runs})
    if not grids:
        return
    types = order(list(dict.fromkeys(r["type"] for r in runs)), TYPES)
    solvers = order(list(dict.fromkeys(r["solver"] for r in runs)), SOLVERS)
    fig, axes = plt.subplots(1, len(grids), figsize=(6.5 * len(grids), 4.5), squeeze=False)
    w = 0.8 / max(1, len(types))
    for ax, n in zip(axes[0], grids):
        for k, t in enumerate(types):
            xs, ys = [], []
            for i, s in enumerate(solvers):
                r = [r for r in runs if int(r["grid"]) == n and r["type"] == t and r["solver"] == s and r["status"] == "ok"]
                if r and num(r[0]["peak_mb"]) is not None:
                    xs.append(i + (k - (len(types) - 1) / 2) * w)
                    ys.append(num(r[0]["peak_mb"]))
            ax.bar(xs, ys, w, label=t)
            for x, y in zip(xs, ys):
                ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=6, rotation=90)
        ax.set_xticks(range(len(solvers)))
        ax.set_xticklabels(solvers, fontsize=8)
        ax.set_ylabel("peak device memory above the baseline (MB)")
        ax.set_title(f"ex45, n = {n} ({n ** 3 / 1e6:.1f}M rows)")
        ax.margins(y=0.12)
        ax.legend(fontsize=8)
    fig.suptitle(f"GPU memory per matrix type and solver{', ' + device if device else ''} (missing bar: the run failed)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv):
    paths, png, device, k = [], None, "", 0
    while k < len(argv):
        if argv[k] == "--png" and k + 1 < len(argv):
            png, k = argv[k + 1], k + 2
        elif argv[k] == "--device" and k + 1 < len(argv):
            device, k = argv[k + 1], k + 2
        else:
            paths.append(argv[k])
            k += 1
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    runs, probes = read(paths)
    print(f"<!-- tests/gpu/memory.sh; {device or 'device unknown'} -->")
    print("## GPU memory of ex45's problem (MB = 10^6 bytes, above the process's baseline)")
    print()
    for line in run_table(runs) + search_table(probes):
        print(line)
    plot(runs, png or os.path.join(os.path.dirname(os.path.abspath(paths[0])), "memory.png"), device)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
