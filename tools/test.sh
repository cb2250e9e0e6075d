#!/usr/bin/env bash
# Installs missing packages, builds Seer (Release) into build/ and runs the whole test
# suite through ctest. Exits non-zero when any test fails. Extra arguments go to ctest
# (e.g. tools/test.sh -R DirectReader).
source "$(dirname "${BASH_SOURCE[0]}")/setup_common.sh"
seer_install_packages
seer_build
cd "$SEER_BUILD"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
