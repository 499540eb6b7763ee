#!/usr/bin/env python3
"""precond.py - the preconditioner table from the logs of tests/gpu/precond.sh.

  precond.py OUTDIR

Logs: pc_PROBLEM_PC_TYPE_rK.log (timing run K, with its -log_view CSV pc_..._rK.csv), pc_PROBLEM_PC_TYPE_gpu.log (the
profile run, -log_view_gpu_time) and pc_PROBLEM_jacobi_TYPE.info (-mat_view of ours).

One row per problem, preconditioner and type, from the timing runs (no -log_view_gpu_time): whole-program wall (s),
MatAssemblyEnd, PCSetUp (with PCSetUpOnBlocks: bjacobi factors its blocks there, outside PCSetUp and KSPSolve) and
KSPSolve (s, max over ranks, the CPU clock of the event from -log_view's CSV), each the median over the runs;
PCSetUp + KSPSolve and wall as ratios of those medians to aijcusparse's, with the range over repetitions of the ratio
taken within one repetition (the types run interleaved, repetition K of each type beside repetition K of
aijcusparse; a repetition in which either failed is left out of both); iterations and host<->device copies inside
KSPSolve (CpuToGpu + GpuToCpu counts of the KSPSolve event) from the first timing run; the matrix's device memory
(aijcusparse's CSR, 12 nnz + 4 (n + 1) bytes, plus our storage's device bytes as -mat_view ::ascii_info reports them
in a run of its own). From the profile run: MatMult's GPU time per call (max over ranks; with two ranks sharing the
GPU it counts the other rank's kernels that run in between), and our storage's set-up (ELLRCopyToGPU + ELLRTune: the
fill from aijcusparse's device CSR and the tuning, aijcusparse's copy excluded) against aijcusparse's own copy to the
GPU (MatCUSPARSCopyTo, in the same run).
"""
import datetime
import glob
import os
import re
import statistics
import sys

TYPES = ("aijcusparse", "sellcuda", "ellrt", "pellr")


def number(s):
    """A -log_view number; None for n/a (an event time PETSc does not give without -log_view_gpu_time)."""
    try:
        return float(s)
    except ValueError:
        return None


def event(text, name):
    """A -log_view event line as a dict (count, time, totalmf, gpumf, c2g, g2c, gpuf); None when absent.

    The line: name, count and ratio, max time and ratio, max flop and ratio, messages, length, reductions, 5 global
    and 5 stage percentages, Total Mflop/s, then the GPU columns: GPU Mflop/s, CpuToGpu count and size, GpuToCpu
    count and size, GPU %F. Times and Mflop/s are n/a where PETSc cannot give them."""
    for line in text.splitlines():
        f = line.split()
        if len(f) > 20 and f[0] == name:
            try:
                return {"count": int(f[1]), "time": number(f[3]), "totalmf": number(f[-7]), "gpumf": number(f[-6]),
                        "c2g": float(f[-5]), "g2c": float(f[-3]), "gpuf": float(f[-1])}
            except ValueError:
                return None
    return None


def gpu_time(e):
    """An event's GPU time (s, max over ranks) from a -log_view_gpu_time table, which prints GPU Mflop/s rather than
    the time: the event's flop (Total Mflop/s x max time) on the GPU (GPU %F) over GPU Mflop/s."""
    if not e or not e["time"] or not e["totalmf"] or not e["gpumf"]:
        return None
    return e["totalmf"] * e["time"] * e["gpuf"] / 100.0 / e["gpumf"]


def csv_times(path):
    """Event name -> (count, time in s): -log_view's ascii_csv, summed over stages, the max over ranks."""
    per = {}
    if not os.path.exists(path):
        return None
    for line in open(path, errors="replace"):
        f = line.strip().split(",")
        if len(f) < 9 or f[0] == "Stage Name" or f[1] == "summary":
            continue
        try:
            c, t = int(f[3]), float(f[4])
        except ValueError:
            continue
        old = per.get((f[1], f[2]), (0, 0.0))
        per[(f[1], f[2])] = (old[0] + c, old[1] + t)
    out = {}
    for (name, _), (c, t) in per.items():
        old = out.get(name, (0, 0.0))
        out[name] = (max(old[0], c), max(old[1], t))
    return out


def parse(path):
    """A timing run: wall, rc, error, its, asm, pcsetup, solve, copies (a failed run: error only)."""
    text = open(path, errors="replace").read()
    r = {}
    m = re.search(r"WALL (\d+) ms rc (\d+)", text)
    r["wall"], r["rc"] = (float(m.group(1)) / 1e3, int(m.group(2))) if m else (0.0, 0)
    # the first line of the message that says what went wrong (PETSc's "See https://..." pointers left out; with two
    # ranks their messages may interleave within a line)
    err = re.search(r"PETSC ERROR: (?!-+ Error Message)(?!WARNING)(?!See )(?!\[\d+\]PETSC ERROR)(.+)", text)
    conv = re.search(r"Linear solve (converged|did not converge) due to (\S+) iterations (\d+)", text)
    if err or not conv or r["rc"]:
        r["error"] = (err.group(1).strip() if err else (conv.group(0) if conv else "no solve"))[:90].replace("|", "/")
        return r
    r["error"] = "" if conv.group(1) == "converged" else conv.group(2)
    r["its"] = int(conv.group(3))
    csv = csv_times(path[:-4] + ".csv") or {}
    for k, evs in (("asm", ("MatAssemblyEnd",)), ("pcsetup", ("PCSetUp", "PCSetUpOnBlocks")), ("solve", ("KSPSolve",))):
        r[k] = sum(csv[ev][1] for ev in evs if ev in csv)
    e = event(text, "KSPSolve")
    r["copies"] = int(e["c2g"] + e["g2c"]) if e else None
    return r


def parse_profile(path):
    """The profile run (-log_view_gpu_time): build, copyto (s), matmult (GPU ms per call); {} when it failed."""
    text = open(path, errors="replace").read()
    r = {}
    m = re.search(r"WALL (\d+) ms rc (\d+)", text)
    if m and int(m.group(2)):
        return r
    fill, tune, copy = event(text, "ELLRCopyToGPU"), event(text, "ELLRTune"), event(text, "MatCUSPARSCopyTo")
    if fill and fill["time"] is not None:
        r["build"] = fill["time"] + ((tune["time"] or 0.0) if tune else 0.0)
    r["copyto"] = copy["time"] if copy else None
    mult = event(text, "MatMult")
    g = gpu_time(mult)
    r["matmult"] = 1e3 * g / mult["count"] if g and mult["count"] else None
    return r


def memory(out, p, t):
    """(ours MB on the device, the CSR's MB) from the -mat_view of the jacobi run."""
    ipath = os.path.join(out, f"pc_{p}_jacobi_{t}.info")
    itext = open(ipath, errors="replace").read() if os.path.exists(ipath) else ""
    dev = re.search(r"([0-9.]+) MB on the device", itext)
    csr = re.search(r"storage ([0-9.]+) MB \(CSR ([0-9.]+) MB\)", itext)
    return (float(dev.group(1)) if dev else None), (float(csr.group(2)) if csr else None)


def header(out, paths, reps):
    """The table's comment lines: machine, software and date first, then how the times were taken."""
    dev = ""
    if os.path.exists(os.path.join(out, "device.txt")):
        f = [c.strip() for c in open(os.path.join(out, "device.txt")).readline().split(",")]
        if len(f) >= 3 and f[0]:
            dev = f"{f[0].replace('NVIDIA ', '')}, driver {f[2]}, "
    cpath = os.path.join(out, "cuda.txt")
    cuda = open(cpath).read().strip() if os.path.exists(cpath) else ""
    ver, opt, date = "", "", ""
    for path in paths:
        text = open(path, errors="replace").read()
        v = re.search(r"PETSc Release Version ([0-9.]+)", text)
        d = re.search(r"--with-debugging=(\S+)", text)
        when = re.search(r" on (\w{3} \w{3} +\d+ \d+:\d+:\d+ \d{4})", text)
        if v and when:
            ver = v.group(1)
            opt = "" if not d else (" (optimized)" if d.group(1) in ("0", "no", "false") else " (debugging)")
            date = datetime.datetime.strptime(" ".join(when.group(1).split()), "%a %b %d %H:%M:%S %Y")
            date = date.strftime("%Y-%m-%d")
            break
    if not date and paths:
        date = datetime.datetime.fromtimestamp(os.path.getmtime(paths[0]), datetime.timezone.utc).strftime("%Y-%m-%d")
    sw = f"PETSc {ver}" + (f" + CUDA {cuda}" if cuda else "") + opt + ", " if ver else ""
    per = "one run per row" if reps == 1 else f"{reps} runs per row"
    print(f"<!-- tests/gpu/precond.sh; {dev}{sw}{date}; {per} -->")
    runs = "one run" if reps == 1 else f"medians of {reps} runs"
    print(f"<!-- times: {runs} per type without -log_view_gpu_time, the types interleaved in each repetition (event "
          "times: CPU clock from -log_view's CSV, max over ranks; PCSetUp includes PCSetUpOnBlocks); ratios: of the "
          "medians, in brackets the range over repetitions of the ratio within one repetition; GPU event times "
          "(MatMult ms/call, set-up) from one more run per type with -log_view_gpu_time -->")


def ratio(r, ref, key):
    """'ratio of the medians (min-max over repetitions of the ratio)' of key (a function of a run) against
    aijcusparse's, over the repetitions in which both ran (a run that failed leaves out its repetition)."""
    common = [k for k in r if k in ref]
    if not common:
        return ""
    a, b = statistics.median(key(r[k]) for k in common), statistics.median(key(ref[k]) for k in common)
    if not b:
        return ""
    pairs = [key(r[k]) / key(ref[k]) for k in common if key(ref[k])]
    if len(pairs) < 2 or r is ref:
        return f"{a / b:.2f}"
    return f"{a / b:.2f} ({min(pairs):.2f}-{max(pairs):.2f})"


def main():
    out = sys.argv[1]
    timing, profile, paths = {}, {}, []
    for path in sorted(glob.glob(os.path.join(out, "pc_*.log"))):
        m = re.match(r"pc_(.+)_([a-z]+)_(" + "|".join(TYPES) + r")_(r\d+|gpu)\.log$", os.path.basename(path))
        if not m:
            continue
        key, run = (m.group(1), m.group(2), m.group(3)), m.group(4)
        paths.append(path)
        if run == "gpu":
            profile[key] = parse_profile(path)
            continue
        timing.setdefault(key, {})[int(run[1:])] = parse(path)
    keys = []
    for (p, pc, t) in sorted(timing):
        if (p, pc) not in keys:
            keys.append((p, pc))
    header(out, paths, max((len(v) for v in timing.values()), default=0))
    print("| problem | PC | type | wall s | MatAssemblyEnd s | PCSetUp s | KSPSolve s | PCSetUp+KSPSolve / aijcusparse | wall / aijcusparse | its | copies in KSPSolve | matrix MB on GPU | MatMult ms/call (GPU) | set-up ms: ours / aijcusparse's copy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, pc in keys:
        ok = {t: {k: x for k, x in timing.get((p, pc, t), {}).items() if "its" in x} for t in TYPES}
        ref = ok["aijcusparse"]
        csr = next((c for t in ("ellrt", "pellr") for c in [memory(out, p, t)[1]] if c), None)
        label = "bjacobi+ilu, 2 ranks" if pc == "bjacobi" else pc
        for t in TYPES:
            runs = timing.get((p, pc, t))
            if runs is None:
                continue
            r = ok[t]
            if not r:
                print(f"| {p} | {label} | {t} | | | | | | | | | | | fails: {runs[min(runs)]['error']} |")
                continue
            med = {x: statistics.median(v[x] for v in r.values()) for x in ("wall", "asm", "pcsetup", "solve")}
            first = r[min(r)]
            ps = ratio(r, ref, lambda x: x["pcsetup"] + x["solve"])
            wr = ratio(r, ref, lambda x: x["wall"])
            ours_mb, csr_mb = memory(out, p, t)
            mem = ""
            if t in ("ellrt", "pellr") and ours_mb is not None and csr_mb is not None:
                mem = f"{csr_mb + ours_mb:.0f} ({(csr_mb + ours_mb) / csr_mb:.2f}x)"
            elif t == "aijcusparse" and csr:
                mem = f"{csr:.0f}"
            note = f" ({first['error']})" if first.get("error") else ""
            if len(r) < len(runs):
                note += f" ({len(runs) - len(r)} of {len(runs)} runs failed: {runs[min(set(runs) - set(r))]['error']})"
            prof = profile.get((p, pc, t), {})
            mm = f"{prof['matmult']:.4f}" if prof.get("matmult") else ""
            su = ""
            if t in ("ellrt", "pellr") and prof.get("build") is not None and prof.get("copyto"):
                su = f"{1e3 * prof['build']:.2f} / {1e3 * prof['copyto']:.2f} = {prof['build'] / prof['copyto']:.2f}"
            print(f"| {p} | {label} | {t} | {med['wall']:.2f} | {med['asm']:.3f} | {med['pcsetup']:.3f} | {med['solve']:.3f} | {ps} | {wr} | {first['its']}{note} | {first['copies']} | {mem} | {mm} | {su} |")


if __name__ == "__main__":
    main()
