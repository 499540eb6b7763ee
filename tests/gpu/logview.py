#!/usr/bin/env python3
"""logview.py - one row of the solver comparison from two -log_view outputs of the same solve.

  logview.py PROBLEM TYPE N NNZ NCOLS LOG_FULL LOG_ZERO [INFO_LOG]

LOG_FULL is the run with the fixed iteration count, LOG_ZERO the same run with -ksp_max_it 0: what is done once
(assembly, conversion) cancels in the difference; the build, tuning and upload that happen inside the first
MatMult are logged as events and taken out of each run first, since they vary between processes by more than
300 products take. MatMult per call and KSPSolve per iteration are steady-state figures for every type alike.
Setup (from LOG_ZERO) = MatAssemblyEnd + MatConvert + the formats' own build/copy-to-GPU events.
GB/s-eff = (12 nnz + 4 (n+1) + 8 ncols + 8 n) / (MatMult time per call), the same count for every format.
Matrix MB is the device memory our formats report (-mat_view ::ascii_info in INFO_LOG), CSR's bytes for
aijcusparse, n/a otherwise.
"""
import os
import re
import sys


def events(path):
    ev, text = {}, open(path, errors="replace").read()
    for line in text.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+\S+\s+([0-9.eE+-]+)\s", line)
        if m:
            ev[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    its = re.findall(r"iterations\s*[=:]?\s*(\d+)", text, re.I)
    err = re.search(r"PETSC ERROR: (?!-+ Error Message)(?!WARNING)(.+)", text)
    return ev, (int(its[-1]) if its else 0), (err.group(1).strip() if err else "")


def main():
    problem, mtype = sys.argv[1], sys.argv[2]
    n, nnz, ncols = (int(x) for x in sys.argv[3:6])
    full, zero = events(sys.argv[6]), events(sys.argv[7])
    if full[2] or zero[2] or not full[0].get("MatMult"):
        why = (full[2] or zero[2] or "no MatMult logged")[:110].replace("|", "/")
        print(f"| {problem} | {mtype} | failed: {why} | | | | | | |")
        return
    get = lambda r, k: r[0].get(k, (0, 0.0))
    # one-time work done inside the first MatMult (ours: plan, upload, fill, tuning; the baselines: the copy to
    # the GPU) varies from process to process by more than 300 products take: take it out of both runs
    inside = lambda r: sum(get(r, k)[1] for k in ("ELLRBuild", "MatCUSPARSCopyTo", "MatCUDACopyTo"))
    dm = get(full, "MatMult")[0] - get(zero, "MatMult")[0]
    tm = (get(full, "MatMult")[1] - inside(full)) - (get(zero, "MatMult")[1] - inside(zero))
    its = full[1] - zero[1]
    # the same for KSPSolve when that work happened inside it (it does when the 0-iteration solve outlasts it)
    ksp = lambda r: get(r, "KSPSolve")[1] - (inside(r) if get(zero, "KSPSolve")[1] >= inside(zero) else 0.0)
    tk = ksp(full) - ksp(zero)
    setup = sum(get(zero, k)[1] for k in ("MatAssemblyEnd", "MatConvert")) + inside(zero)
    per_mult = tm / dm
    gbs = (12 * nnz + 4 * (n + 1) + 8 * ncols + 8 * n) / per_mult / 1e9
    mb = "n/a"
    if len(sys.argv) > 8 and os.path.exists(sys.argv[8]):
        dev = re.findall(r"([0-9.]+) MB on the device", open(sys.argv[8], errors="replace").read())
        if dev:
            mb = f"{float(dev[0]):.1f}"  # the first view (the operator; a DM may view it twice)
    if mtype == "aijcusparse":
        mb = f"{(12 * nnz + 4 * (n + 1)) / 1e6:.1f}"
    print(f"| {problem} | {mtype} | {dm} | {per_mult * 1e3:.4f} | {gbs:.0f} | {tk / its * 1e3:.4f} | {setup * 1e3:.1f} | "
          f"{setup / per_mult:.0f} | {mb} | {full[1]} |")


if __name__ == "__main__":
    main()
