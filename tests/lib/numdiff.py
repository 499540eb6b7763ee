#!/usr/bin/env python3
"""numdiff.py - compare two text outputs token by token, numbers with a tolerance.

usage: numdiff.py [--rtol R] [--atol A] EXPECTED ACTUAL

Integers must match exactly (iteration counts, sizes); floating-point numbers (with a '.' or an
exponent) match when |a - e| <= atol + rtol * |e|; every other token must be identical. Lines are
compared in order. Exit 0 when equal; else prints the first differences (at most 10) and exits 1.
"""
import os
import re
import sys

NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
SPLIT = re.compile(r"([\s,;:()\[\]=]+)")


def tokens(line):
    return [t for t in SPLIT.split(line.strip()) if t and not t.isspace()]


INT_RTOL = float(os.environ.get("ELLR_ITS_RTOL", "0"))


def isfloat(t):
    return NUM.match(t) and ("." in t or "e" in t or "E" in t)


def same(e, a, rtol, atol):
    if e == a:
        return True
    if NUM.match(e) and NUM.match(a):
        if not isfloat(e) and not isfloat(a):
            # ELLR_ITS_RTOL (GPU runs): a GPU sums a row in another order than CSR on the CPU, which can move
            # the iteration count of an ill-conditioned solve by a few percent; 0 (exact) otherwise
            return abs(int(a) - int(e)) <= INT_RTOL * abs(int(e))
        fe, fa = float(e), float(a)
        return abs(fa - fe) <= atol + rtol * abs(fe)
    return False


def main():
    args = sys.argv[1:]
    rtol, atol = 1e-6, 0.0
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--rtol":
            rtol = float(args.pop(0))
        elif opt == "--atol":
            atol = float(args.pop(0))
        else:
            sys.exit("numdiff.py: unknown option " + opt)
    if len(args) != 2:
        sys.exit(__doc__)
    with open(args[0], errors="replace") as f:
        exp = [l for l in f.read().splitlines()]
    with open(args[1], errors="replace") as f:
        act = [l for l in f.read().splitlines()]
    diffs = []
    for i in range(max(len(exp), len(act))):
        e = exp[i] if i < len(exp) else "<missing line>"
        a = act[i] if i < len(act) else "<missing line>"
        te, ta = tokens(e), tokens(a)
        if len(te) != len(ta) or not all(same(x, y, rtol, atol) for x, y in zip(te, ta)):
            diffs.append((i + 1, e, a))
    if diffs:
        for ln, e, a in diffs[:10]:
            print("line %d:\n  expected: %s\n  got:      %s" % (ln, e, a))
        if len(diffs) > 10:
            print("... %d more differing lines" % (len(diffs) - 10))
        sys.exit(1)


if __name__ == "__main__":
    main()
