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
# Each translation unit with device code holds one cubin per architecture and the PTX of the newest.  Their names
# carry the unit ("ellr_cuda.sm_90.cubin") only when the objects have line information; otherwise they are
# "libpetscellr.N.sm_90.cubin", so the units are counted per architecture, and the kernels are looked for by
# their symbol in each architecture's code.
echo "check_arch: $LIB with $CUOBJ"
echo "claimed: SASS for $ARCHS, PTX of $LAST"
printf '%s\n%s\n' "$ELF" "$PTX" | sed 's/^/  /'
count() { printf '%s\n' "$1" | grep -c "\.$2\.$3\$"; }
missing=0
UNITS=$(count "$ELF" "sm_$LAST" cubin)
if [ "$UNITS" -lt 1 ]; then
  echo "MISSING: no cubin for sm_$LAST"
  missing=1
fi
for a in $ARCHS; do
  n=$(count "$ELF" "sm_$a" cubin)
  if [ "$n" != "$UNITS" ]; then
    echo "MISSING: $n cubins for sm_$a, $UNITS for sm_$LAST (one per unit with device code and architecture)"
    missing=1
  fi
done
n=$(count "$PTX" "sm_$LAST" ptx)
if [ "$n" != "$UNITS" ]; then
  echo "MISSING: $n PTX of sm_$LAST for $UNITS units (the newest architecture's PTX of every unit)"
  missing=1
fi
SYMS=$("$CUOBJ" --dump-elf-symbols "$LIB" 2>&1)
# the fill (ellr_cuda.cu) and the sliced product's two kernels (one module per T, ellr_cuda_mult_t*.cu)
for k in ellr_kernel_fill ellr_kernel_rows ellr_kernel_chunks; do
  KARCHS=$(printf '%s\n' "$SYMS" | awk -v k="$k" '/^arch = /{a=$3} /ENTRY/ && index($0, k) {print a}' | sort -u)
  for a in $ARCHS; do
    if ! printf '%s\n' "$KARCHS" | grep -qx "sm_$a"; then
      echo "MISSING: the kernel $k in no cubin for sm_$a"
      missing=1
    fi
  done
done
extra=$(printf '%s\n' "$ELF" | sed -n 's/^ELF file *[0-9]*: .*\.sm_\([0-9]*[a-z]*\)\.cubin$/\1/p' | sort -nu | while read -r a; do case " $ARCHS " in *" $a "*) ;; *) printf '%s ' "$a" ;; esac; done)
[ -n "$extra" ] && echo "note: also cubins for sm_ $extra(not claimed: a stale object from another CUDA_ARCH?)"
if [ $missing = 0 ]; then
  echo "check_arch: OK ($UNITS units x $(printf '%s\n' $ARCHS | wc -l) architectures + PTX $LAST, the kernels in each)"
  exit 0
fi
echo "check_arch: FAILED (objects built with another CUDA_ARCH?  make clean lib rebuilds them)"
exit 1
