#!/usr/bin/env bash
# The GPU comparison of issue 6: Seer's modes and the PyTorch Geometric peer
# (bench/pyg_peer.py) on one GPU machine, same dataset, same memory limit, same
# hyper-parameters. Three steps; only `fetch` needs the network:
#
#   bench/gpu.sh fetch [DIR]        on a machine with apt (this dev VM): download the
#                                   Debian packages Seer builds against (liburing, TBB,
#                                   fmt, CLI11, GTest, zlib, nlohmann-json, xxHash) into
#                                   DIR (default .deps, which
#                                   must be git-ignored: echo /.deps/ >> .git/info/exclude)
#   bench/gpu.sh build [DIR]        on the GPU machine: unpack DIR/*.deb into a prefix
#                                   (dpkg -x, nothing installed system-wide) and build
#                                   Seer Release against the machine's CUDA PyTorch
#                                   (CMAKE_PREFIX_PATH = torch.utils.cmake_prefix_path)
#                                   into build-gpu/
#   bench/gpu.sh bench [e2e args]   on the GPU machine: bench/e2e.sh with the peer added
#                                   (--modes default below), training only, GPU timings
#
# For the device tool (10-minute commands, 30 device-minutes a session), one call:
#   carry [".deps"], command:
#   bench/gpu.sh build && NODES=2000000 bench/gpu.sh bench --medium --repeats 1 --out $OUT/e2e
# The dataset is generated there (seer gen); --large does not fit one 10-minute call.
# Results: OUT/summary.json, OUT/results.jsonl and the table (copy it to bench/RESULTS.md).
set -euo pipefail
STEP="${1:-}"; shift || true
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEB_DIR_DEFAULT="$ROOT/.deps"
PREFIX="${SEER_DEPS_PREFIX:-/tmp/seer-deps}"
BUILD="${BUILD:-$ROOT/build-gpu}"
PACKAGES="liburing-dev liburing2 libtbb-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libfmt-dev libfmt9 \
libcli11-dev libgtest-dev googletest libhwloc15 zlib1g-dev nlohmann-json3-dev libxxhash-dev libxxhash0"

deps_env() {  # library and pkg-config paths of the unpacked prefix
  local lib="$PREFIX/usr/lib/x86_64-linux-gnu"
  export PKG_CONFIG_PATH="$lib/pkgconfig:$PREFIX/usr/share/pkgconfig:${PKG_CONFIG_PATH:-}"
  export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
  export CMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)');$PREFIX/usr"
}

case "$STEP" in
  fetch)
    DIR="${1:-$DEB_DIR_DEFAULT}"
    mkdir -p "$DIR"
    (cd "$DIR" && for p in $PACKAGES; do apt-get download "$p" || echo "gpu.sh: WARNING: no package $p here"; done)
    ls -la "$DIR"
    git -C "$ROOT" check-ignore -q "$DIR" || echo "gpu.sh: WARNING: $DIR is not git-ignored; add it to .git/info/exclude"
    ;;
  build)
    DIR="${1:-$DEB_DIR_DEFAULT}"
    ls "$DIR"/*.deb >/dev/null 2>&1 || { echo "gpu.sh: no .deb files in $DIR (run 'bench/gpu.sh fetch' with network, carry the folder)" >&2; exit 1; }
    mkdir -p "$PREFIX"
    for f in "$DIR"/*.deb; do dpkg -x "$f" "$PREFIX"; done
    # The .pc and CMake files name /usr: point them at the prefix.
    grep -rl "^prefix=/usr" "$PREFIX/usr" --include=*.pc 2>/dev/null | xargs -r sed -i "s|^prefix=/usr|prefix=$PREFIX/usr|"
    deps_env
    nvidia-smi -L || echo "gpu.sh: WARNING: no nvidia-smi"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available())'
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" \
      -DCMAKE_CUDA_ARCHITECTURES=90 -G Ninja
    cmake --build "$BUILD" --target seer seer-train direct_reader_bench -j "$(nproc)" 2>&1 | tail -20 ||
      cmake --build "$BUILD" --target seer direct_reader_bench -j "$(nproc)" 2>&1 | tail -20
    ;;
  bench)
    deps_env
    python3 -c 'import torch_geometric; print("torch_geometric", torch_geometric.__version__)'
    export MODES="${MODES:-pyg-peer pyg+ ali+pg:0:100 ali+pg:50:50 ali+pg:100:0 seer seer-pg}"
    exec "$ROOT/bench/e2e.sh" --build "$BUILD" --only train --modes "$MODES" "$@"
    ;;
  *)
    sed -n '2,25p' "$0"
    exit 2 ;;
esac
