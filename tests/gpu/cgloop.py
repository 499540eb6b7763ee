#!/usr/bin/env python3
"""tests/gpu/cgloop.py OUTDIR [cg|bcgs] - the table of tests/gpu/cgloop.sh's logs (markdown on stdout).

Per problem, type and solver: time per iteration = (KSPSolve at the larger iteration count - at the smaller) / the
iterations between, median over the repetitions; the bound = bytes an iteration must move / the device's copy rate
(COPY_GBS, the H100's measured 2998):
  product  12 nnz + 4 (n + 1) + 8 n + 8 n       (values and column indices, row pointers, x read, y written)
  KSPCG    + 19 n doubles of vector traffic: VecAYPX p (3), VecDot p'w (2), VecAXPY x (3), VecAXPY r (3),
           PCApply z = d r (3), VecNorm z (1), VecDot z'r (2)  -> 17 n, plus 2 n for PCApply's diagonal read = 19 n
  cgdevice + 13 n doubles: direction (r, d, p read, p written: 4), curvature (p, w: 2), step (x, r read and written,
           p, w, d read: 7)
BiCGStab (cg replaced by bcgs), two products per iteration:
  KSPBCGS    + 27 n doubles: VecDot rho (2), VecAXPBYPCZ p (4), PCApply v = d .* (A p) (3), VecDot (v, rp) (2),
             VecWAXPY s (3), PCApply t = d .* (A s) (3), VecDotNorm2 (s, t) (2), VecAXPBYPCZ x (4), VecWAXPY r (3),
             VecNorm r (1)
  bcgsdevice + 22 n doubles: direction (r, v, p read, p written: 4), alpha (d, v read, v written, rp read: 4), residual
             (r, v read, s written: 3), omega (d, t read, t written, s read: 4), step (x, p, s, t, rp read, x, r
             written: 7)
"""
import glob, os, re, statistics, sys

COPY_GBS = float(os.environ.get("COPY_GBS", "2998"))
out = sys.argv[1]
M = sys.argv[2] if len(sys.argv) > 2 else "cg"
MD = M + "device"
PETSC_NAME = {"cg": "KSPCG", "bcgs": "KSPBCGS"}[M]
PRODUCTS, VEC_PETSC, VEC_DEVICE = {"cg": (1, 19, 13), "bcgs": (2, 27, 22)}[M]


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
    m = re.match(r"iter_(ex\w+?_\d+)_([a-z]+)_(%s|%s)_(\d+)_(\d+)\.log" % (M, MD), os.path.basename(f))
    if m:
        p, t, k, its, r = m.groups()
        runs.setdefault((p, t, k), {}).setdefault(r, {})[int(its)] = parse(f)

dev = open(os.path.join(out, "device.txt")).read().strip() if os.path.exists(os.path.join(out, "device.txt")) else "?"
print(f"device: {dev}; bound at {COPY_GBS:.0f} GB/s (device-to-device copy)\n")
P, D = PETSC_NAME, MD
print(f"| problem | rows | type | {P} ms/it | {D} ms/it | {D} / {P} | {D} / its bound | {P} / its bound | {D} / {P} with aijcusparse | {D} ran |")
print("|---|---|---|---|---|---|---|---|---|---|")
problems = sorted({k[0] for k in runs}, key=lambda s: (s.split("_")[0], int(s.split("_")[-1])))
for p in problems:
    base = None
    for t in ["aijcusparse", "sellcuda", "ellrt", "pellr"]:
        per = {}
        info = None
        for k in [M, MD]:
            vals = []
            for r, d in runs.get((p, t, k), {}).items():
                lo, hi = min(d), max(d)
                if lo < hi and d[lo].get("t") is not None and d[hi].get("t") is not None:
                    di = (d[hi]["its"] or hi) - (d[lo]["its"] or lo)
                    if di > 0:
                        vals.append((d[hi]["t"] - d[lo]["t"]) / di)
                    info = info or d[lo]
                    if k == MD:
                        per["path"] = f'{d[lo]["path"]} (k={d[lo]["batch"]})'
            per[k] = statistics.median(vals) if vals else None
        if not info or info["rows"] is None:
            print(f"| {p} | | {t} | failed | | | | | | |")
            continue
        n, nnz = info["rows"], info["nnz"] or 0
        spmv = 12 * nnz + 4 * (n + 1) + 16 * n
        b_cg = (PRODUCTS * spmv + 8 * VEC_PETSC * n) / (COPY_GBS * 1e9)
        b_dev = (PRODUCTS * spmv + 8 * VEC_DEVICE * n) / (COPY_GBS * 1e9)
        if t == "aijcusparse":
            base = per.get(M)
        f = lambda v: f"{1e3 * v:.3f}" if v else "-"
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        print(f"| {p} | {n} | {t} | {f(per.get(M))} | {f(per.get(MD))} | {ratio(per.get(MD), per.get(M))} | {ratio(per.get(MD), b_dev)} | {ratio(per.get(M), b_cg)} | {ratio(per.get(MD), base)} | {per.get('path', '-')} |")

print("\nto rtol 1e-6, KSPSolve (the solve's one-time work included), medians:\n")
print(f"| problem | type | {P} s | its | {D} s | its | {D} / {P} | {D} / {P} with aijcusparse |")
print("|---|---|---|---|---|---|---|---|")
tts, tts_problem = {}, "-"
for f in glob.glob(os.path.join(out, "tts_*.log")):
    m = re.match(r"tts_(ex\w+?_\d+)_([a-z]+)_(%s|%s)_(\d+)\.log" % (M, MD), os.path.basename(f))
    if m:
        tts_problem = m.group(1)
        tts.setdefault((m.group(2), m.group(3)), []).append(parse(f))
base = None
for t in ["aijcusparse", "sellcuda", "ellrt", "pellr"]:
    row = {}
    for k in [M, MD]:
        ds = [d for d in tts.get((t, k), []) if d["t"] is not None]
        row[k] = (statistics.median([d["t"] for d in ds]), ds[0]["its"]) if ds else (None, None)
    if t == "aijcusparse":
        base = row[M][0]
    a, b = row[M][0], row[MD][0]
    print(f"| {tts_problem} | {t} | {a if a is None else f'{a:.4f}'} | {row[M][1]} | {b if b is None else f'{b:.4f}'} | {row[MD][1]} | {f'{b / a:.2f}' if a and b else '-'} | {f'{b / base:.2f}' if b and base else '-'} |")
