#!/usr/bin/env bash
# Installs what the MPI replay (meson -Dns3_mpi=enabled: rocesw-replay-mpi) needs beyond
# scripts/setup.sh, run as root: Open MPI and Debian's ns-3.37 libraries, and builds what Debian's
# binary packages leave out (they are built without MPI): ns-3's `mpi` module and the
# point-to-point remote channel, from Debian's `ns3` source package of the installed version,
# into a cache outside the repo (default /var/cache/rocesw/ns3-mpi/VERSION; ROCESW_NS3_MPI_CACHE
# sets the parent). Nothing is downloaded outside the package archives. A second run finds the
# cache and returns at once. Prints the directory built (its lib/pkgconfig holds
# ns3-mpi-rocesw.pc, which meson finds through PKG_CONFIG_PATH).
set -euo pipefail
# shellcheck source=lib/apt.sh
. "$(dirname "$0")/lib/apt.sh"
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0
fi
PKGS=(
  libopenmpi-dev openmpi-bin  # MPI (Open MPI 4.1): the ranks and their messages
  libns3-dev                  # ns-3.37 (GPL-2.0-only): core, network, point-to-point
  libgsl-dev                  # Debian's ns3-core.pc names libgsl.so (only the -dev package has it)
  dpkg-dev                    # apt-get source unpacks with dpkg-source
  g++ pkg-config
)
apt_install_missing setup-ns3-mpi.sh "${PKGS[@]}"

version=$(dpkg-query -W -f='${Version}' libns3-dev)
cache="${ROCESW_NS3_MPI_CACHE:-/var/cache/rocesw/ns3-mpi}/$version"
# what this script changes in ns-3's build (the stamp names it: a new one rebuilds)
build_rev="rocesw-2: MPI messages of up to 16 KiB"
if [ -f "$cache/done" ] && [ "$(cat "$cache/done")" = "$build_rev" ]; then
  echo "$cache"
  exit 0
fi

# the source of the same version, from a deb-src entry of the archive the binaries came from
if ! apt-get source --print-uris "ns3=$version" >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-ns3-mpi.sh: no deb-src entry for ns3 $version; run as root to add one" >&2
    exit 1
  fi
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/rocesw-deb-src.sources
  else
    grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      > /etc/apt/sources.list.d/rocesw-deb-src.list
  fi
  echo "setup-ns3-mpi.sh: added a deb-src entry for the same archive" >&2
  apt-get update -qq
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -qq "ns3=$version" >/dev/null 2>&1) || {
  echo "setup-ns3-mpi.sh: apt-get source ns3=$version failed" >&2; exit 1; }
src=$(find "$work" -maxdepth 4 -type d -path '*/src/mpi' | head -1)
src=${src%/src/mpi}
[ -n "$src" ] || { echo "setup-ns3-mpi.sh: no src/mpi in the ns3 source" >&2; exit 1; }

# what the binary packages lack: src/mpi's model and the remote channel, compiled with NS3_MPI
# against the installed headers (the rest of point-to-point is in libns3-point-to-point)
stage="$cache.tmp"
rm -rf "$stage"
mkdir -p "$stage/include/ns3" "$stage/lib/pkgconfig" "$stage/obj"
# ns-3 receives MPI messages into buffers of 2000 bytes, less than one 4 KiB RoCE frame: room
# for a jumbo frame (9216 bytes) and its headers
m="$src/src/mpi/model"
sed -i 's/MAX_MPI_MSG_SIZE = 2000;/MAX_MPI_MSG_SIZE = 16384;/' \
  "$m/granted-time-window-mpi-interface.h" "$m/null-message-mpi-interface.cc"
for f in "$m/granted-time-window-mpi-interface.h" "$m/null-message-mpi-interface.cc"; do
  grep -q 'MAX_MPI_MSG_SIZE = 16384;' "$f" ||
    { echo "setup-ns3-mpi.sh: no MPI message size in $f" >&2; exit 1; }
done
cp "$src"/src/mpi/model/*.h "$src"/src/point-to-point/model/point-to-point-remote-channel.h \
  "$stage/include/ns3/"
# included as ns-3 installs its headers: "ns3/NAME.h"
sed -i 's|^#include "\([a-z0-9-]*\.h\)"|#include "ns3/\1"|' "$stage"/include/ns3/*.h
sed -i 's|^#include "ns3/mpi.h"|#include <mpi.h>|' "$stage"/include/ns3/*.h
printf '#include "ns3/mpi-interface.h"\n#include "ns3/mpi-receiver.h"\n' \
  > "$stage/include/ns3/mpi-module.h"
cflags="-O2 -fPIC -std=c++17 -DNS3_MPI -I$stage/include"
cflags+=" $(pkg-config --cflags ns3-core ns3-network ns3-point-to-point) $(mpicxx --showme:compile)"
objs=()
for f in "$src"/src/mpi/model/*.cc \
  "$src"/src/point-to-point/model/point-to-point-remote-channel.cc; do
  o="$stage/obj/$(basename "${f%.cc}").o"
  # shellcheck disable=SC2086
  g++ $cflags -c "$f" -o "$o" &
  objs+=("$o")
done
wait
# shellcheck disable=SC2046
g++ -shared -o "$stage/lib/libns3-mpi-rocesw.so" "${objs[@]}" \
  $(pkg-config --libs ns3-core ns3-network ns3-point-to-point) $(mpicxx --showme:link)
rm -rf "$stage/obj"
cat > "$stage/lib/pkgconfig/ns3-mpi-rocesw.pc" <<EOF
prefix=$cache
Name: ns3-mpi-rocesw
Description: ns-3 $version's mpi module and point-to-point remote channel, built by rocesw's scripts/setup-ns3-mpi.sh (GPL-2.0-only)
Version: ${version%%-*}
Requires: ns3-core ns3-network ns3-point-to-point ompi-cxx
Cflags: -DNS3_MPI -I\${prefix}/include
Libs: -L\${prefix}/lib -Wl,-rpath,\${prefix}/lib -lns3-mpi-rocesw
EOF
echo "$build_rev" > "$stage/done"
rm -rf "$cache"
mv "$stage" "$cache"
# the prefix was written for its final place
echo "$cache"
