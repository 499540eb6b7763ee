#!/usr/bin/env python3
"""precond_plot_check.py TABLE.md OUT.png - what tests/gpu/precond_plot.py reads from a preconditioner table.

TABLE.md is tests/gpu/fixtures/precond_plot.md: rows of doc/precond-h100.md with ratios with and without ranges, a
type that cannot run the preconditioner (sellcuda with GAMG) and a run that did not converge (DIVERGED_ITS). The plot
must show the ratios with their ranges, leave out the other two, and take the device and runs per row from the
header; where matplotlib is installed the PNG must be written. Prints what differs; exit status 1 if anything does.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import precond_plot  # noqa: E402

table, png = sys.argv[1], sys.argv[2]
rows, device, runs = precond_plot.read(table)
want = {("ex45_128", "gamg"): {"aijcusparse": (1.0, 1.0, 1.0), "ellrt": (1.05, 0.89, 1.08), "pellr": (1.01, 0.88, 1.08)},
        ("ex1_27pt_100", "jacobi"): {"aijcusparse": (1.0, 1.0, 1.0), "sellcuda": (1.26, 1.26, 1.61), "ellrt": (0.87, 0.80, 0.96)}}
bad = []
if rows != want:
    bad.append(f"precond_plot.py read {rows}, expected {want}")
if (device, runs) != ("H100 80GB HBM3", "3 runs"):
    bad.append(f"precond_plot.py read the header as {device!r}, {runs!r}")
sys.argv = ["precond_plot.py", table, png]
if precond_plot.main() != 0:
    bad.append("precond_plot.py failed")
try:
    import matplotlib  # noqa: F401
    if not os.path.exists(png) or os.path.getsize(png) == 0:
        bad.append("precond_plot.py wrote no PNG")
except ImportError:
    pass
print("\n".join(bad))
sys.exit(1 if bad else 0)
