#!/usr/bin/env python3
"""tests/gpu/cgloop.py OUTDIR - the table of tests/gpu/cgloop.sh's logs (markdown on stdout).

Per problem, type and solver: time per iteration = (KSPSolve at 500 iterations - at 100) / the iterations between, median over the
repetitions; the bound = bytes an iteration must move / the device's copy rate (COPY_GBS, the H100's measured 2998):
  product  12 nnz + 4 (n + 1) + 8 n + 8 n       (values and column indices, row pointers, x read, y written)
  KSPCG    + 19 n doubles of vector traffic: VecAYPX p (3), VecDot p'w (2), VecAXPY x (3), VecAXPY r (3),
           PCApply z = d r (3), VecNorm z (1), VecDot z'r (2)  -> 17 n, plus 2 n for PCApply's diagonal read = 19 n
  cgdevice + 13 n doubles: direction (r, d, p read, p written: 4), curvature (p, w: 2), step (x, r read and written,
           p, w, d read: 7)
"""
import glob, os, re, statistics, sys

COPY_GBS = float(os.environ.get("COPY_GBS", "2998"))
out = sys.argv[1]


def parse(path):
    t = nnz = rows = None
    path_s = batch = reason = its = None
    for line in open(path, errors="replace"):
        if line.startswith("KSPSolve "):
            t = float(line.split()[3])
        m = re.search(r"rows=(\d+), cols=\d+", line)
        if m and rows is None:
            rows = int(m.group(1))
        m = re.search(r"total: nonzeros=(\d+)", line)
        if m and nnz is None:
            nnz = int(m.group(1))
        m = re.search(r"iterations run by: (.*); host looks every (\d+)", line)
        if m:
            path_s, batch = m.group(1), int(m.group(2))
        m = re.search(r"Linear solve (converged|did not converge) due to (\S+) iterations (\d+)", line)
        if m:
            reason, its = m.group(2), int(m.group(3))
    return dict(t=t, nnz=nnz, rows=rows, path=path_s, batch=batch, reason=reason, its=its)


runs = {}
for f in glob.glob(os.path.join(out, "iter_*.log")):
    m = re.match(r"iter_(ex\w+?_\d+)_(\w+)_(cg|cgdevice)_(\d+)_(\d+)\.log", os.path.basename(f))
    if m:
        p, t, k, its, r = m.groups()
        runs.setdefault((p, t, k), {}).setdefault(r, {})[int(its)] = parse(f)

dev = open(os.path.join(out, "device.txt")).read().strip() if os.path.exists(os.path.join(out, "device.txt")) else "?"
print(f"device: {dev}; bound at {COPY_GBS:.0f} GB/s (device-to-device copy)\n")
print("| problem | rows | type | KSPCG ms/it | cgdevice ms/it | cgdevice / KSPCG | cgdevice / its bound | KSPCG / its bound | cgdevice / KSPCG with aijcusparse | cgdevice ran |")
print("|---|---|---|---|---|---|---|---|---|---|")
problems = sorted({k[0] for k in runs}, key=lambda s: (s.split("_")[0], int(s.split("_")[-1])))
for p in problems:
    base = None
    for t in ["aijcusparse", "sellcuda", "ellrt", "pellr"]:
        per = {}
        info = None
        for k in ["cg", "cgdevice"]:
            vals = []
            for r, d in runs.get((p, t, k), {}).items():
                if d.get(100, {}).get("t") is not None and d.get(500, {}).get("t") is not None:
                    di = (d[500]["its"] or 500) - (d[100]["its"] or 100)
                    if di > 0:
                        vals.append((d[500]["t"] - d[100]["t"]) / di)
                    info = info or d[100]
                    if k == "cgdevice":
                        per["path"] = f'{d[100]["path"]} (k={d[100]["batch"]})'
            per[k] = statistics.median(vals) if vals else None
        if not info or info["rows"] is None:
            print(f"| {p} | | {t} | failed | | | | | | |")
            continue
        n, nnz = info["rows"], info["nnz"] or 0
        spmv = 12 * nnz + 4 * (n + 1) + 16 * n
        b_cg = (spmv + 8 * 19 * n) / (COPY_GBS * 1e9)
        b_dev = (spmv + 8 * 13 * n) / (COPY_GBS * 1e9)
        if t == "aijcusparse":
            base = per.get("cg")
        f = lambda v: f"{1e3 * v:.3f}" if v else "-"
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        print(f"| {p} | {n} | {t} | {f(per.get('cg'))} | {f(per.get('cgdevice'))} | {ratio(per.get('cgdevice'), per.get('cg'))} | {ratio(per.get('cgdevice'), b_dev)} | {ratio(per.get('cg'), b_cg)} | {ratio(per.get('cgdevice'), base)} | {per.get('path', '-')} |")

print("\nex45 160^3 to rtol 1e-6, KSPSolve (the solve's one-time work included), medians:\n")
print("| type | KSPCG s | its | cgdevice s | its | cgdevice / KSPCG | cgdevice / KSPCG with aijcusparse |")
print("|---|---|---|---|---|---|---|")
tts = {}
for f in glob.glob(os.path.join(out, "tts_*.log")):
    m = re.match(r"tts_ex45_160_(\w+)_(cg|cgdevice)_(\d+)\.log", os.path.basename(f))
    if m:
        tts.setdefault((m.group(1), m.group(2)), []).append(parse(f))
base = None
for t in ["aijcusparse", "sellcuda", "ellrt", "pellr"]:
    row = {}
    for k in ["cg", "cgdevice"]:
        ds = [d for d in tts.get((t, k), []) if d["t"] is not None]
        row[k] = (statistics.median([d["t"] for d in ds]), ds[0]["its"]) if ds else (None, None)
    if t == "aijcusparse":
        base = row["cg"][0]
    a, b = row["cg"][0], row["cgdevice"][0]
    print(f"| {t} | {a if a is None else f'{a:.4f}'} | {row['cg'][1]} | {b if b is None else f'{b:.4f}'} | {row['cgdevice'][1]} | {f'{b / a:.2f}' if a and b else '-'} | {f'{b / base:.2f}' if b and base else '-'} |")
