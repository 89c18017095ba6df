#!/usr/bin/env bash
# What watching JVMs' memory costs heapd per JVM per poll, for 1 and 50 JVMs (tests/java/OffHeap.java:
# 8 MiB of direct buffers and 20 threads each, -Xmx32m): CPU time in heapd and in its attach
# children, the wall time of one poll of all of them, and the system calls of each mode (strace -c).
#
#   bench/run_memory_watch_bench.sh [--counts "1 50"] [--polls N] [--build-dir DIR]
#
# Environment: HEAPD_BUILD_DIR  the CMake build directory (default <repo>/build), for
#              bench/memory_watch_bench and the compiled test programs (tests/java)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
counts="1 50"
polls=10
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
while [[ $# -gt 0 ]]; do
    case $1 in
        --counts) counts=$2; shift ;;
        --polls) polls=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
bench=$build_dir/bench/memory_watch_bench
[[ -x $bench ]] || { echo "no $bench: ninja -C $build_dir memory_watch_bench" >&2; exit 1; }
classes=$(dirname "$(find "$build_dir/tests" -name OffHeap.class | head -1)")
[[ -d $classes ]] || { echo "no OffHeap.class under $build_dir/tests: build the tests first" >&2; exit 1; }

pids=()
cleanup() { [[ ${#pids[@]} -eq 0 ]] || kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT
for n in $counts; do
    cleanup
    pids=()
    for ((i = 0; i < n; i++)); do
        java -Xmx32m -cp "$classes" OffHeap 8 20 >/dev/null &
        pids+=($!)
    done
    sleep $((5 + n / 5))  # until they have started
    "$bench" --polls "$polls" "${pids[@]}"
    # The calls of 3 polls less those of 1 (the program's own start cancels out), per JVM and poll.
    for mode in glance proc attach; do
        calls=()
        for p in 1 3; do
            out=$(mktemp)
            strace -f -c -o "$out" "$bench" --polls "$p" --mode "$mode" "${pids[@]}" >/dev/null
            calls+=("$(awk '$NF == "total" { print $4 }' "$out")")
            rm -f "$out"
        done
        printf '%-7s %4d JVMs  system calls per JVM per poll: %d\n' "$mode" "$n" $(((calls[1] - calls[0]) / (2 * n)))
    done
done
