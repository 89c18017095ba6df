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

# Debian packages the fuzz build needs: the compiler, its libFuzzer/sanitizer runtimes, the
# libstdc++ headers it compiles against, the build tools and the libraries formats/ uses.
packages="clang-16 libclang-rt-16-dev libstdc++-12-dev cmake ninja-build nlohmann-json3-dev zlib1g-dev"

install_missing() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    missing=""
    for p in $packages; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing="$missing $p"
        fi
    done
    [ -n "$missing" ] || return 0
    echo "fuzz.sh: installing$missing"
    if [ "$(id -u)" -eq 0 ]; then
        as_root=""
    elif command -v sudo >/dev/null 2>&1; then
        as_root="sudo"
    else
        echo "fuzz.sh: missing packages:$missing (run as root or install them)" >&2
        exit 1
    fi
    $as_root apt-get update
    # shellcheck disable=SC2086 # the package list is meant to split
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y --no-install-recommends $missing
}

install_missing

cmake -S "$src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DHEAPD_BUILD_TESTS=OFF \
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
