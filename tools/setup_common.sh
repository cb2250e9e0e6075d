# Sourced by tools/demo.sh and tools/test.sh: install missing Debian packages, then
# configure and build Seer (Release) into build/. Idempotent: installs nothing and
# rebuilds incrementally when nothing changed.
set -euo pipefail

SEER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SEER_BUILD="${SEER_BUILD:-$SEER_ROOT/build}"
SEER_PACKAGES=(build-essential cmake pkg-config liburing-dev libtbb-dev libfmt-dev
               libcli11-dev libtorch-dev libgtest-dev libbenchmark-dev python3 python3-numpy
               nlohmann-json3-dev libxxhash-dev zlib1g-dev libthrust-dev libgloo-dev
               pybind11-dev python3-dev python3-torch python3-pytest)

seer_as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

seer_install_packages() {
  local missing=()
  for p in "${SEER_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "seer: installing missing packages: ${missing[*]}"
    seer_as_root apt-get update -q
    seer_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
}

# seer_build [TARGET...]: configure once, then build the given targets (all without any).
seer_build() {
  local jobs targets=()
  jobs="$(nproc 2>/dev/null || echo 2)"
  for t in "$@"; do targets+=(--target "$t"); done
  if [ ! -f "$SEER_BUILD/CMakeCache.txt" ]; then
    cmake -S "$SEER_ROOT" -B "$SEER_BUILD" -DCMAKE_BUILD_TYPE=Release ${SEER_CMAKE_ARGS:-}
  fi
  cmake --build "$SEER_BUILD" -j "$jobs" "${targets[@]}"
}
