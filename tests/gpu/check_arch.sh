#!/bin/bash
# Checks that the library holds the GPU code the makefile claims: for every translation unit with
# device code, one cubin (SASS) per architecture of CUDA_ARCH and the PTX of the last one.
#
#   tests/gpu/check_arch.sh [LIBRARY]          (default build/lib/libpetscellr.so; run from the repository root)
#
# The claimed list is the makefile's CUDA_ARCH as `make info` prints it, so the environment that selects
# it for make selects it here too (CUDA_ARCH="80 90", PETSC_DIR, PETSC_ARCH).  cuobjdump: $CUOBJDUMP, else
# on PATH, else $CUDA_DIR/bin or /usr/local/cuda/bin, else the pip package nvidia-cuda-cuobjdump
# (pip install nvidia-cuda-cuobjdump).  Exit status: 0 all present, 1 something missing, 2 cannot check.
set -u
LIB=${1:-build/lib/libpetscellr.so}

find_cuobjdump() {
  local c
  for c in "${CUOBJDUMP:-}" "$(command -v cuobjdump 2>/dev/null)" "${CUDA_DIR:-/usr/local/cuda}/bin/cuobjdump" /usr/local/cuda/bin/cuobjdump; do
    if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  local py
  for py in python3 python; do
    command -v "$py" >/dev/null 2>&1 || continue
    c=$("$py" - <<'EOF' 2>/dev/null
import glob, os, site, sys
roots = list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()] + sys.path
for r in roots:
    for p in sorted(glob.glob(os.path.join(r, "nvidia", "**", "bin", "cuobjdump"), recursive=True)):
        if os.access(p, os.X_OK):
            print(p)
            sys.exit(0)
EOF
)
    if [ -n "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}

if [ ! -f "$LIB" ]; then
  echo "check_arch: $LIB not found (make lib first)"
  exit 2
fi
CUOBJ=$(find_cuobjdump) || {
  echo "check_arch: no cuobjdump (set CUOBJDUMP, or pip install nvidia-cuda-cuobjdump)"
  exit 2
}
INFO=$(make -s --no-print-directory info 2>/dev/null | grep 'CUDA_ARCH=')
ARCHS=$(printf '%s\n' "$INFO" | sed -n 's/.*CUDA_ARCH=\(.*\) engine \.cu:.*/\1/p')
if [ -z "${ARCHS// /}" ]; then
  echo "check_arch: cannot read CUDA_ARCH from 'make info': $INFO"
  exit 2
fi
LAST=${ARCHS##* }

ELF=$("$CUOBJ" --list-elf "$LIB" 2>&1)
PTX=$("$CUOBJ" --list-ptx "$LIB" 2>&1)
# translation units with device code: "ELF file    1: ellr_cuda.sm_90.cubin" -> ellr_cuda
UNITS=$(printf '%s\n' "$ELF" | sed -n 's/^ELF file *[0-9]*: \(.*\)\.sm_[0-9]*[a-z]*\.cubin$/\1/p' | sort -u)
echo "check_arch: $LIB with $CUOBJ"
echo "claimed: SASS for $ARCHS, PTX of $LAST"
printf '%s\n%s\n' "$ELF" "$PTX" | sed 's/^/  /'
missing=0
if ! printf '%s\n' "$UNITS" | grep -qx 'ellr_cuda'; then
  echo "MISSING: no cubin of ellr_cuda (the kernels) at all"
  missing=1
fi
for u in $UNITS; do
  for a in $ARCHS; do
    if ! printf '%s\n' "$ELF" | grep -q ": $u\.sm_$a\.cubin\$"; then
      echo "MISSING: $u.sm_$a.cubin"
      missing=1
    fi
  done
  if ! printf '%s\n' "$PTX" | grep -q ": $u\.sm_$LAST\.ptx\$"; then
    echo "MISSING: $u.sm_$LAST.ptx (PTX of the newest architecture)"
    missing=1
  fi
done
extra=$(printf '%s\n' "$ELF" | sed -n 's/^ELF file *[0-9]*: .*\.sm_\([0-9]*[a-z]*\)\.cubin$/\1/p' | sort -nu | while read -r a; do case " $ARCHS " in *" $a "*) ;; *) printf '%s ' "$a" ;; esac; done)
[ -n "$extra" ] && echo "note: also cubins for sm_ $extra(not claimed: a stale object from another CUDA_ARCH?)"
if [ $missing = 0 ]; then
  echo "check_arch: OK ($(printf '%s\n' $UNITS | wc -l) units x $(printf '%s\n' $ARCHS | wc -l) architectures + PTX $LAST)"
  exit 0
fi
echo "check_arch: FAILED (objects built with another CUDA_ARCH?  make clean lib rebuilds them)"
exit 1
