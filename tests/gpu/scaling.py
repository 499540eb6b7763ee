#!/usr/bin/env python3
"""tests/gpu/scaling.py OUTDIR - the tables (markdown on stdout) and plot (OUTDIR/scaling.png) of tests/gpu/scaling.sh.

Time per iteration: ex1's second solve (-solves 2 -timing: nothing one-time in it).  KSPSolve: PETSc's ex45 256^3 as a
user runs it (-log_view, max over ranks; the first product's set-up inside).  Efficiency: strong t1 / (p tp), weak t1 / tp.

The model (pJDS's overlap, Kreutzer et al. 2012), for NCCL's exchange (the rows of ours with NCCL), predicts the time per iteration on p GPUs from the one-GPU run:
    t(p) = f + (t1 - f) / p + max(0, t_halo(p) - t_diag(p)) + t_off + r * t_red
  t1     one GPU's time per iteration of the same global problem (strong) or of the same rows per GPU (weak; then the
         second term is t1 - f, unscaled)
  f      the floor: ex1 32^3's time per iteration on one GPU (launches and the host's waits, which no split shrinks)
  t_diag the diagonal block's product, overlapping the exchange: the one-GPU product (-log_view_gpu_time) / p
  t_halo NCCL's one-way time for the largest message a rank sends (2 faces of n^2 doubles between slabs, one at the
         ends): latency + bytes / bandwidth from nccl_pingpong.py
  t_off  the off-diagonal block's product: one launch (its few rows move no bytes worth counting), 5 us
  r      3 host all-reduces per CG iteration (two inner products and the norm), t_red each (mpi4py's, else 5 us)
"""
import glob
import os
import re
import statistics
import sys

out = sys.argv[1]
TYPES = ["aijcusparse", "sellcuda", "ellrt", "pellr"]


def read(p):
    return open(p, errors="replace").read() if os.path.exists(p) else ""


def parse(path):
    text = read(path)
    d = {"ok": "converged due to" in text or "Timing: KSPSolve 2" in text}
    m = re.findall(r"Timing: KSPSolve 2 ([0-9.]+) s \((\d+) iterations\), ([0-9.]+) ms per iteration", text)
    if m:
        d["solve2"], d["its"], d["ms_it"] = float(m[-1][0]), int(m[-1][1]), float(m[-1][2])
    m = re.search(r"time to solution ([0-9.]+) s", text)
    if m:
        d["tts"] = float(m.group(1))
    for line in text.splitlines():
        f = line.split()
        if len(f) > 4 and f[0] in ("KSPSolve", "MatMult", "ELLRHaloNCCL", "VecScatterBegin", "VecScatterEnd"):
            try:
                d[f[0]] = (int(f[1]), float(f[3]))
            except ValueError:
                pass
    m = re.search(r"Linear solve converged due to \S+ iterations (\d+)", text)
    if m and "its" not in d:
        d["its"] = int(m.group(1))
    m = re.search(r"NCCL ghost exchange of .*? pack ([0-9.]+), transfer ([0-9.]+), unpack ([0-9.]+); diagonal block ([0-9.]+), "
                  r"exchange left exposed after it ([0-9.]+), off-diagonal block ([0-9.]+); product ([0-9.]+)", text)
    if m:
        d["phases"] = [float(v) for v in m.groups()]
    d["nccl"] = "GPU to GPU through NCCL" in text
    m = re.search(r"iterations run by: ([^;]*);", text)
    d["loop"] = m.group(1) if m else "?"
    m = re.search(r"staged through the host by MPI \(MPIAIJ's exchange\): (.*)", text)
    d["why_host"] = m.group(1) if m else None
    return d


runs = {}
for f in glob.glob(os.path.join(out, "*_np*.log")):
    m = re.match(r"(strongloop|strong|weak|ex45loop|ex45late|ex45|parts|floor)_(\w+?)_(nccl|host|-)_np(\d+)\.log$", os.path.basename(f))
    if m:
        runs[(m.group(1), m.group(2), m.group(3), int(m.group(4)))] = parse(f)
nps = sorted({k[3] for k in runs})
dev = read(os.path.join(out, "device.txt")).strip()

pp = {}
for line in read(os.path.join(out, "pingpong.txt")).splitlines():
    f = line.split()
    if len(f) == 2:
        try:
            pp[f[0]] = float(f[1])
        except ValueError:
            pass
lat, bw, red = pp.get("latency_us"), pp.get("bandwidth_GBs"), pp.get("allreduce_us", 5.0)
if bw is not None and bw <= 0:  # the fit over message sizes failed (times flat or noisy): no model rather than a wrong one
    print(f"(nccl_pingpong.py's fit gave bandwidth {bw} GB/s: the model is left out)\n")
    bw = None
floor = runs.get(("floor", "ellrt", "nccl", 1), {}).get("ms_it")
parts = runs.get(("parts", "ellrt", "nccl", 1), {})
tmult1 = parts["MatMult"][1] / parts["MatMult"][0] * 1e3 if "MatMult" in parts and parts["MatMult"][0] else None


def model(t1, p, n, strong):
    """ms per iteration on p GPUs from the one-GPU parts (None where an input is missing)."""
    if None in (t1, floor, lat, bw) or p == 1:
        return t1 if p == 1 else None
    body = (t1 - floor) / p if strong else (t1 - floor)
    diag = (tmult1 / p if strong else tmult1) if tmult1 else 0.0
    faces = 1 if p == 2 else 2
    halo = (lat + faces * n * n * 8 / (bw * 1e9) * 1e6) * 1e-3  # ms; both directions at once: the larger side
    return floor + body + max(0.0, halo - diag) + 0.005 + 3 * red * 1e-3


def variants(t):
    return ["nccl", "host"] if t in ("ellrt", "pellr") else ["-"]


def name(t, h):
    return t if h == "-" else f"{t} ({'NCCL' if h == 'nccl' else 'host-staged'})"


print(f"device: {dev}; NCCL one-way latency {lat} us, bandwidth {bw} GB/s, host all-reduce {red} us; floor {floor} ms/it; "
      f"one-GPU MatMult {tmult1 and round(tmult1, 4)} ms (GPU-timed)\n")
weakn = {1: 203, 2: 256, 4: 322, 8: 406}
plot = {}
for series, label in (("strong", "Strong scaling, ex1 7-point 256^3 (16.8M rows), CG + Jacobi to 1e-6"),
                      ("weak", "Weak scaling, ex1 7-point, about 8.4M rows per GPU (n = 203, 256, 322)")):
    print(f"**{label}** -- ms per iteration (second solve), efficiency, the model's prediction\n")
    print("| type | " + " | ".join(f"{p} GPU{'s' if p > 1 else ''}" for p in nps) + " | efficiency at " + str(nps[-1]) + " | model / measured at " + " / ".join(str(p) for p in nps[1:]) + " | vs aijcusparse at " + str(nps[-1]) + " |")
    print("|---|" + "---|" * len(nps) + "---|---|---|")
    base = {}
    for t in TYPES:
        for h in variants(t):
            t1 = runs.get((series, t, "nccl" if h == "host" else h, 1), {}).get("ms_it")
            row, effs, mods = [], None, []
            for p in nps:
                d = runs.get((series, t, h if p > 1 else ("nccl" if h == "host" else h), p), {})
                v = d.get("ms_it")
                row.append(f"{v:.3f}" + ("" if p == 1 or h != "nccl" or d.get("nccl") else " (no NCCL)") if v else "fails" if d else "")
                if v and p > 1:  # the model is of NCCL's exchange; the others wait on the host's
                    mp = model(t1, p, 256 if series == "strong" else weakn[p], series == "strong") if h == "nccl" else None
                    mods.append(f"{mp / v:.2f}" if mp else "-")
                if v and p == nps[-1] and t1:
                    effs = t1 / (p * v) if series == "strong" else t1 / v
                if v:
                    plot.setdefault(series, {}).setdefault(name(t, h), []).append((p, v))
            last = runs.get((series, t, h if nps[-1] > 1 else "-", nps[-1]), {}).get("ms_it")
            if t == "aijcusparse":
                base = last
            rel = f"{last / base:.2f}" if last and base else ""
            eff = f"{effs:.0%}" if effs else ""
            print(f"| {name(t, h)} | " + " | ".join(row) + f" | {eff} | " + " / ".join(mods) + f" | {rel} |")
    print()

phased = sorted((k, d["phases"]) for k, d in runs.items() if "phases" in d)
if phased:
    print("**Where NCCL's product goes** -- CUDA events at the exchange's phases, mean of 100 products of the first solve, ms, "
          "each the slowest rank's; the model's t_halo beside (latency + the largest message / bandwidth)\n")
    print("| series | type | GPUs | pack | transfer | unpack | diagonal block | exposed after it | off-diagonal block | product | model t_halo |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (series, t, h, p), ph in phased:
        n = 256 if series == "strong" else weakn.get(p, 0)
        th = (lat + (1 if p == 2 else 2) * n * n * 8 / (bw * 1e9) * 1e6) * 1e-3 if lat and bw else None
        tail = f"{th:.4f}" if th else "-"
        print(f"| {series} | {t} | {p} | " + " | ".join(f"{v:.4f}" for v in ph) + f" | {tail} |")
    print()

print("**KSPSolve as a user runs it**, PETSc's ex45 256^3, CG + Jacobi to 1e-6 (the first product's set-up included), s\n")
print("| type | " + " | ".join(f"{p} GPU{'s' if p > 1 else ''}" for p in nps) + f" | speed-up 1 -> {nps[-1]} | vs aijcusparse at each |")
print("|---|" + "---|" * len(nps) + "---|---|")
ref = {p: runs.get(("ex45", "aijcusparse", "-", p), {}).get("KSPSolve", (0, None))[1] for p in nps}
for t in TYPES:
    for h in variants(t):
        vals = []
        for p in nps:
            d = runs.get(("ex45", t, h if p > 1 else ("nccl" if h == "host" else h), p), {})
            vals.append(d.get("KSPSolve", (0, None))[1])
        cells = [f"{v:.3f}" if v else "" for v in vals]
        su = f"{vals[0] / vals[-1]:.2f}x" if vals[0] and vals[-1] else ""
        rel = " / ".join(f"{v / ref[p]:.2f}" if v and ref.get(p) else "-" for v, p in zip(vals, nps))
        print(f"| {name(t, h)} | " + " | ".join(cells) + f" | {su} | {rel} |")

def loop_row(series, t, value, ref, label, always):
    """One row of a table of the library's loop: the values at each GPU count against ref[p], and which loop ran."""
    vals, ran = [], set()
    for p in nps:
        d = runs.get((series, t, "nccl" if t in ("ellrt", "pellr") else "-", p), {})
        vals.append(value(d))
        if d:
            ran.add(d.get("loop", "?"))
    if not always and not any(vals):
        return
    cells = [f"{v:.3f}" if v else "" for v in vals]
    su = f"{vals[0] / vals[-1]:.2f}x" if vals[0] and vals[-1] else ""
    rel = " / ".join(f"{v / ref[p]:.2f}" if v and ref.get(p) else "-" for v, p in zip(vals, nps))
    print(f"| {label} | " + " | ".join(cells) + f" | {su} | {rel} | {', '.join(sorted(ran))} |")


def loop_header():
    print("| type | " + " | ".join(f"{p} GPU{'s' if p > 1 else ''}" for p in nps) + f" | speed-up 1 -> {nps[-1]} | vs PETSc's CG + aijcusparse at each | loop ran |")
    print("|---|" + "---|" * len(nps) + "---|---|---|")


if any(k[0] == "ex45loop" for k in runs):
    print("\n**KSPSolve with the library's loop** (-ksp_type cgdevice: the scalars on the GPU, the reductions summed over "
          "the ranks by NCCL), the same problem, s; against PETSc's CG with aijcusparse at each count\n")
    loop_header()
    for t in TYPES:
        solve = lambda d: d.get("KSPSolve", (0, None))[1]
        loop_row("ex45loop", t, solve, ref, t, True)
        loop_row("ex45late", t, solve, ref, f"{t}, peers connected at their first call", False)

if any(k[0] == "strongloop" for k in runs):
    print("\n**The library's loop per iteration** (-ksp_type cgdevice), ex1 7-point 256^3, ms per iteration of the second "
          "solve; against PETSc's CG with aijcusparse at each count (the strong series)\n")
    loop_header()
    sref = {p: runs.get(("strong", "aijcusparse", "-", p), {}).get("ms_it") for p in nps}
    for t in TYPES:
        loop_row("strongloop", t, lambda d: d.get("ms_it"), sref, t, False)

hosts = sorted({d["why_host"] for k, d in runs.items() if d.get("why_host") and k[2] == "nccl"})
if hosts:
    print("\nNCCL not used where asked: " + "; ".join(hosts))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, series in zip(axes, ("strong", "weak")):
        for lab, pts in sorted(plot.get(series, {}).items()):
            pts.sort()
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o", label=lab)
        ax.set_xscale("log", base=2)
        ax.set_xticks(nps)
        ax.set_xticklabels([str(p) for p in nps])
        ax.set_xlabel("GPUs (one rank each)")
        ax.set_ylabel("ms per CG iteration")
        ax.set_title(("strong: ex1 256^3" if series == "strong" else "weak: ~8.4M rows per GPU") + f"\n{dev.split(',')[0]}")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.png"), dpi=110)
except Exception as exc:  # the tables are the result; the plot is a convenience
    print(f"\n(no plot: {exc})", file=sys.stderr)
