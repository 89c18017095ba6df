#!/bin/sh
# Configures, builds and runs the fuzz tests (ctest label fuzz) with clang 16.
# On Debian/Ubuntu, installs the missing build dependencies first (as root, or through sudo).
# Environment: HEAPD_FUZZ_BUILD_DIR (default <repo>/build-fuzz), HEAPD_FUZZ_SECONDS (default 60),
# HEAPD_FUZZ_CXX (default clang++-16).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
build=${HEAPD_FUZZ_BUILD_DIR:-$src/build-fuzz}
seconds=${HEAPD_FUZZ_SECONDS:-60}
cxx=${HEAPD_FUZZ_CXX:-clang++-16}

# The Debian packages the fuzz build needs (.ci/packages/fuzz).
"$src/.ci/install" fuzz

cmake -S "$src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DHEAPD_BUILD_TESTS=OFF \
    -DHEAPD_UNITY_BUILD=OFF \
    -DHEAPD_BUILD_FUZZ=ON \
    -DHEAPD_FUZZ_SECONDS="$seconds"
cmake --build "$build" --target heapd_fuzz

status=0
ctest --test-dir "$build/fuzz" -L fuzz --output-on-failure || status=$?
if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: the fuzz tests failed; crashing inputs (if any):" >&2
    ls -l "$build/fuzz/hprof/artifacts" >&2 2>/dev/null || true
fi
exit "$status"
