#!/usr/bin/env python3
"""tts.py - time to solution as a user sees it, one markdown table from the logs of tests/gpu/solvers.sh.

  tts.py OUTDIR

Each problem and type has three runs: OUTDIR/tts_<problem>_<type>_np<N>.log (the solve as a user runs it),
.events (one iteration, -log_view_gpu_time: events timed with the GPU synchronized) and .info (ours: -mat_view).
The timed run:
  - ex1 runs (-timing -solves 2) print MatAssemblyEnd, the first MatMult (which carries the format's set-up for
    aijcusparse, ellrt, pellr), the first KSPSolve, and a second KSPSolve from zero whose time per iteration has
    nothing one-time in it; time to solution = MatAssemblyEnd + first MatMult + first KSPSolve.
  - ex45 runs (PETSc's tutorial, unmodified) give MatAssemblyEnd and KSPSolve from -log_view (max over ranks);
    time to solution = their sum (the first product, with its set-up, is inside KSPSolve).
Set-up = the events of the one-time copy: ELLRBuild (ours: page-lock, upload, plan, fill, tune), MatCUSPARSCopyTo
(aijcusparse), MatCUDACopyTo (sellcuda, inside MatAssemblyEnd).  Our -mat_view ::ascii_info line gives the parts.
"""
import glob
import os
import re
import sys

PEERS = ("aijcusparse", "sellcuda")


def events(text):
    ev = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+)\s+(\d+)\s+\S+\s+([0-9.eE+-]+)\s", line)
        if m:
            ev[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return ev


def read(path):
    return open(path, errors="replace").read() if os.path.exists(path) else ""


def parse(path):
    text = read(path)
    evtext, info = read(path[:-4] + ".events"), read(path[:-4] + ".info")
    err = re.search(r"PETSC ERROR: (?!-+ Error Message)(?!WARNING)(.+)", text)
    if err or "Timing" not in text and "KSPSolve" not in text:
        return {"error": (err.group(1).strip() if err else "no output")[:100].replace("|", "/")}
    ev = events(evtext)
    r = {"error": ""}
    g = lambda k: ev.get(k, (0, 0.0))[1]
    tev = events(text)
    t = re.search(r"Timing: MatAssemblyEnd ([0-9.]+) s, first MatMult ([0-9.]+) s, KSPSolve ([0-9.]+) s \((\d+) iterations\), time to solution ([0-9.]+)", text)
    if t:
        r["asm"], r["mult1"], r["solve"], r["its"], r["tts"] = float(t.group(1)), float(t.group(2)), float(t.group(3)), int(t.group(4)), float(t.group(5))
        t2 = re.search(r"Timing: KSPSolve 2 ([0-9.]+) s \((\d+) iterations\), ([0-9.]+) ms per iteration", text)
        r["periter"] = float(t2.group(3)) if t2 else None
    else:
        its = re.findall(r"iterations\s*[=:]?\s*(\d+)", text, re.I)
        r["asm"], r["mult1"], r["solve"] = g("MatAssemblyEnd"), 0.0, tev.get("KSPSolve", (0, 0.0))[1]
        r["its"] = int(its[-1]) if its else 0
        r["tts"] = r["asm"] + r["solve"]
        r["periter"] = None
    r["setup"] = g("ELLRBuild") + g("MatCUSPARSCopyTo") + g("MatCUDACopyTo")
    r["copy"] = g("MatCUSPARSCopyTo") + g("MatCUDACopyTo")
    text = info
    m = re.search(r"GPU setup ([0-9.]+) ms \(wall\): plan on the (?:GPU|host) ([0-9.]+) ms, upload ([0-9.]+) ms \(([0-9.]+) MB at ([0-9.]+) GB/s, page-locking ([0-9.]+) ms of it on the host\), fill ([0-9.]+) ms, tune ([0-9.]+) ms \((\d+) products\)", text)
    r["parts"] = (f"{float(m.group(1)):.1f} = plan {float(m.group(2)):.1f} + upload {float(m.group(3)):.1f} ({float(m.group(5)):.0f} GB/s; locking {float(m.group(6)):.1f} inside) + fill {float(m.group(7)):.1f} + tune {float(m.group(8)):.1f} ({m.group(9)} products)" if m else "")
    m2 = re.search(r"row order ([0-9.]+) ms, slice geometry ([0-9.]+) ms, storage allocation ([0-9.]+) ms; then waited ([0-9.]+) ms", text)
    if m2 and r["parts"]:
        r["parts"] += f" [plan: order {float(m2.group(1)):.1f}, geometry {float(m2.group(2)):.1f}, alloc {float(m2.group(3)):.1f}; waited {float(m2.group(4)):.1f} for the upload]"
    m = re.search(r"picked by ([a-z ]+) \(", text)
    if m and r["parts"]:
        r["parts"] += f", by {m.group(1)}"
    return r


def main():
    out = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "tts_*.log"))):
        m = re.match(r"tts_(.+)_([a-z]+)_np(\d+)\.log$", os.path.basename(path))
        if m:
            runs[(m.group(1).replace("_", " "), int(m.group(3)), m.group(2))] = parse(path)
    print("| problem | GPUs | type | MatAssemblyEnd s | first MatMult s | KSPSolve s | iterations | time to solution s | / best peer | ms per iteration (2nd solve) | / sellcuda | set-up ms | / aijcusparse copy | set-up parts (ms) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for (prob, np_) in sorted({(p, n) for (p, n, t) in runs}):
        row = {t: runs[(p, n, t)] for (p, n, t) in runs if (p, n) == (prob, np_)}
        peers = [row[t]["tts"] for t in PEERS if t in row and not row[t]["error"]]
        best = min(peers) if peers else None
        sell = row.get("sellcuda", {}).get("periter")
        cusp = row.get("aijcusparse", {}).get("copy")
        for t in ("aijcusparse", "sellcuda", "ellrt", "pellr"):
            if t not in row:
                continue
            r = row[t]
            if r["error"]:
                print(f"| {prob} | {np_} | {t} | failed: {r['error']} | | | | | | | | | | |")
                continue
            rel = f"{r['tts'] / best:.2f}" if best else ""
            pi = f"{r['periter']:.4f}" if r["periter"] else ""
            ps = f"{r['periter'] / sell:.2f}" if r["periter"] and sell else ""
            su = f"{r['setup'] * 1e3:.1f}" if r["setup"] else ""
            sc = f"{r['setup'] / cusp:.2f}" if r["setup"] and cusp and t in ("ellrt", "pellr") else ""
            print(f"| {prob} | {np_} | {t} | {r['asm']:.4f} | {r['mult1']:.4f} | {r['solve']:.4f} | {r['its']} | {r['tts']:.4f} | {rel} | {pi} | {ps} | {su} | {sc} | {r['parts']} |")


if __name__ == "__main__":
    main()
