#!/usr/bin/env bash
# config/petscellr-pc.sh - writes petscellr.pc (pkg-config) to stdout; `make install` calls it.
#
#   config/petscellr-pc.sh PREFIX VERSION CCOMPILER PETSC_PC "PETSC_CFLAGS" "PETSC_LIBS"
#
# PETSC_DIR and PETSC_ARCH (environment) name the PETSc the library was built against.  The PETSc
# dependency is written as "Requires: <name>" when pkg-config, searching as it does now, finds a .pc of
# exactly that PETSc (same prefix) under that name: Debian's /usr/lib/petsc ships PETSc.pc and petsc.pc,
# found through /usr/lib/x86_64-linux-gnu/pkgconfig, and /usr/lib/petsc64 is found as PETSc64.  Otherwise
# (no .pc, or the name leads pkg-config to another PETSc: another version, another index width, a
# Debian alternative switched to complex scalars) PETSc's own include and library flags, from its
# petscvariables, go into Cflags and Libs.  PETSC_PC: auto (the above), none (always the flags) or a
# pkg-config name to require as is.
set -euo pipefail
prefix=$1 version=$2 cc=$3 want=$4 petsc_cflags=$5 petsc_libs=$6
PETSC_DIR=${PETSC_DIR:?PETSC_DIR is not set}
PETSC_ARCH=${PETSC_ARCH:-}

pdir=$PETSC_DIR${PETSC_ARCH:+/$PETSC_ARCH}
vh=$pdir/include/petscversion.h
[ -f "$vh" ] || vh=$PETSC_DIR/include/petscversion.h
pv=$(awk '/define PETSC_VERSION_(MAJOR|MINOR|SUBMINOR) /{v[$2]=$3} END{print v["PETSC_VERSION_MAJOR"]"."v["PETSC_VERSION_MINOR"]"."v["PETSC_VERSION_SUBMINOR"]}' "$vh")
major=${pv%%.*} rest=${pv#*.}; minor=${rest%%.*}

req=
case $want in
none) ;;
auto)
  if command -v pkg-config >/dev/null 2>&1; then
    mine=$(readlink -f "$pdir")
    for f in "$pdir"/lib/pkgconfig/[Pp][Ee][Tt][Ss][Cc]*.pc; do
      [ -f "$f" ] || continue
      n=$(basename "$f" .pc)
      found=$(pkg-config --variable=prefix "$n" 2>/dev/null) || continue
      [ -n "$found" ] && [ "$(readlink -f "$found")" = "$mine" ] && { req=$n; break; }
    done
  fi ;;
*) req=$want ;;
esac

cat <<EOF
# petsc-ellr $version, built against PETSc $pv at $PETSC_DIR${PETSC_ARCH:+ (PETSC_ARCH=$PETSC_ARCH)}
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include
petsc_dir=$PETSC_DIR
petsc_arch=$PETSC_ARCH
ccompiler=$cc

Name: petscellr
Description: ELLPACK-R GPU matrix types ellrt and pellr for PETSc (libpetscellr)
Version: $version
EOF
if [ -n "$req" ]; then
  # the library's ABI is that of PETSc major.minor
  echo "Requires: $req >= $pv, $req < $major.$((minor + 1))"
  echo "Cflags: -I\${includedir}"
  echo "Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lpetscellr"
else
  echo "Cflags: -I\${includedir} $petsc_cflags"
  echo "Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lpetscellr $petsc_libs"
fi
