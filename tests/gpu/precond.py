#!/usr/bin/env python3
"""precond.py - the preconditioner table from the logs of tests/gpu/precond.sh.

  precond.py OUTDIR

One row per problem, preconditioner and type: whole-program wall (s), MatAssemblyEnd, PCSetUp and KSPSolve (s, max
over ranks, from -log_view with -log_view_gpu_time), iterations, host<->device copies inside KSPSolve (CpuToGpu +
GpuToCpu counts of the KSPSolve event), the matrix's device memory (aijcusparse's CSR, 12 nnz + 4 (n + 1) bytes, plus
our storage's device bytes as -mat_view ::ascii_info reports them in a run of its own), the ratios to aijcusparse's, and
our storage's set-up (ELLRCopyToGPU + ELLRTune: the fill from aijcusparse's device CSR and the tuning, aijcusparse's
copy excluded) against aijcusparse's own copy to the GPU (MatCUSPARSCopyTo, in the same run).
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
    m = re.search(r"WALL (\d+) ms rc (\d+)", text)
    r["wall"], r["rc"] = (float(m.group(1)) / 1e3, int(m.group(2))) if m else (None, 0)
    if r["wall"] is None:  # PETSc's own: PetscInitialize() to PetscFinalize(), the process's start left out
        t = re.search(r"^Time \(sec\):\s+([0-9.eE+-]+)", text, re.M)
        r["wall"] = float(t.group(1)) if t else 0.0
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
    fill, tune, copy = event(text, "ELLRCopyToGPU"), event(text, "ELLRTune"), event(text, "MatCUSPARSCopyTo")
    r["build"] = (fill[1] + (tune[1] if tune else 0.0)) if fill else None
    r["copyto"] = copy[1] if copy else None
    ipath = re.sub(r"_(jacobi|ilu|icc|gamg|bjacobi)_([a-z]+)\.info$", r"_jacobi_\2.info", path[:-4] + ".info")
    itext = open(ipath, errors="replace").read() if os.path.exists(ipath) else ""
    dev = re.search(r"([0-9.]+) MB on the device", itext)
    csr = re.search(r"storage ([0-9.]+) MB \(CSR ([0-9.]+) MB\)", itext)
    r["ours_mb"] = float(dev.group(1)) if dev else None
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
    print("| problem | PC | type | wall s | MatAssemblyEnd s | PCSetUp s | KSPSolve s | PCSetUp+KSPSolve / aijcusparse | wall / aijcusparse | its | copies in KSPSolve | matrix MB on GPU | set-up ms: ours / aijcusparse's copy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
            su = ""
            if t in ("ellrt", "pellr") and r.get("build") is not None and r.get("copyto"):
                su = f"{1e3 * r['build']:.2f} / {1e3 * r['copyto']:.2f} = {r['build'] / r['copyto']:.2f}"
            print(f"| {p} | {label} | {t} | {r['wall']:.2f} | {r['asm']:.3f} | {r['pcsetup']:.3f} | {r['solve']:.3f} | {ratio} | {wr} | {r['its']}{note} | {r['copies']} | {mem} | {su} |")


if __name__ == "__main__":
    main()
