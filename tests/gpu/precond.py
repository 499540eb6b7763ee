#!/usr/bin/env python3
"""precond.py - the preconditioner table from the logs of tests/gpu/precond.sh.

  precond.py OUTDIR

One row per problem, preconditioner and type: whole-program wall (s), MatAssemblyEnd, PCSetUp and KSPSolve (s, max
over ranks, from -log_view with -log_view_gpu_time), iterations, host<->device copies inside KSPSolve (CpuToGpu +
GpuToCpu counts of the KSPSolve event), the matrix's device memory (aijcusparse's CSR, 12 nnz + 4 (n + 1) bytes, plus
our storage as -mat_view ::ascii_info reports it), and the ratios to aijcusparse's.
"""
import glob
import os
import re
import sys

TYPES = ("aijcusparse", "sellcuda", "ellrt", "pellr")


def event(text, name):
    """(count, max time, CpuToGpu count, GpuToCpu count) of a -log_view event line; None when absent."""
    for line in text.splitlines():
        f = line.split()
        if len(f) > 20 and f[0] == name:
            try:
                return int(f[1]), float(f[3]), float(f[-5]), float(f[-3])
            except ValueError:
                return None
    return None


def parse(path):
    text = open(path, errors="replace").read()
    r = {}
    m = re.search(r"WALL ([0-9.]+) rc (\d+)", text)
    r["wall"], r["rc"] = (float(m.group(1)), int(m.group(2))) if m else (None, -1)
    err = re.search(r"PETSC ERROR: (?!-+ Error Message)(?!WARNING)(.+)", text)
    conv = re.search(r"Linear solve (converged|did not converge) due to (\S+) iterations (\d+)", text)
    if err or not conv or r["rc"]:
        r["error"] = (err.group(1).strip() if err else (conv.group(0) if conv else "no solve"))[:90].replace("|", "/")
        return r
    r["error"] = "" if conv.group(1) == "converged" else conv.group(2)
    r["its"] = int(conv.group(3))
    for k, ev in (("asm", "MatAssemblyEnd"), ("pcsetup", "PCSetUp"), ("solve", "KSPSolve")):
        e = event(text, ev)
        r[k] = e[1] if e else 0.0
        if k == "solve":
            r["copies"] = int(e[2] + e[3]) if e else None
    csr = re.search(r"storage ([0-9.]+) MB \(CSR ([0-9.]+) MB\)", text)
    r["ours_mb"] = float(csr.group(1)) if csr else None
    r["csr_mb"] = float(csr.group(2)) if csr else None
    return r


def main():
    out = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "pc_*.log"))):
        m = re.match(r"pc_(.+)_([a-z]+)_([a-z]+)\.log$", os.path.basename(path))
        if m:
            runs[(m.group(1), m.group(2), m.group(3))] = parse(path)
    keys = []
    for (p, pc, t) in runs:
        if (p, pc) not in keys:
            keys.append((p, pc))
    print("| problem | PC | type | wall s | MatAssemblyEnd s | PCSetUp s | KSPSolve s | PCSetUp+KSPSolve / aijcusparse | wall / aijcusparse | its | copies in KSPSolve | matrix MB on GPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, pc in keys:
        ref = runs.get((p, pc, "aijcusparse"), {})
        csr = next((runs[(p, pc, t)].get("csr_mb") for t in ("ellrt", "pellr") if runs.get((p, pc, t), {}).get("csr_mb")), None)
        for t in TYPES:
            r = runs.get((p, pc, t))
            if r is None:
                continue
            label = "bjacobi+ilu, 2 ranks" if pc == "bjacobi" else pc
            if r.get("error") and "its" not in r:
                print(f"| {p} | {label} | {t} | | | | | | | | | fails: {r['error']} |")
                continue
            ps = r["pcsetup"] + r["solve"]
            rps = (ref.get("pcsetup", 0) + ref.get("solve", 0)) if "its" in ref else 0
            ratio = f"{ps / rps:.2f}" if rps else ""
            wr = f"{r['wall'] / ref['wall']:.2f}" if "its" in ref and ref.get("wall") else ""
            mem = ""
            if t in ("ellrt", "pellr") and r.get("ours_mb") is not None and r.get("csr_mb") is not None:
                mem = f"{r['csr_mb'] + r['ours_mb']:.0f} ({(r['csr_mb'] + r['ours_mb']) / r['csr_mb']:.2f}x)"
            elif t == "aijcusparse" and csr:
                mem = f"{csr:.0f}"
            note = f" ({r['error']})" if r.get("error") else ""
            print(f"| {p} | {label} | {t} | {r['wall']:.2f} | {r['asm']:.3f} | {r['pcsetup']:.3f} | {r['solve']:.3f} | {ratio} | {wr} | {r['its']}{note} | {r['copies']} | {mem} |")


if __name__ == "__main__":
    main()
