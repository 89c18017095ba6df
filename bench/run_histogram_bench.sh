#!/usr/bin/env bash
# Runs the histogram benchmark end to end: builds a large live heap in a JVM (BigHeap.java), dumps
# it with jcmd, then compares the histogram pass with reading the same file with cat (page cache warm).
#
#   bench/run_histogram_bench.sh [--fresh] [--runs N] [--build-dir DIR] [--scale S] [--advise-sequential]
#                                [--keep-cache]
#
# Before timing, the dump's pages are evicted from the page cache (dd iflag=nocache) and read back
# once, so every run starts from the same cache state: how the kernel cached a file (folio sizes)
# changes the page-fault cost of mapping it severalfold. --keep-cache skips the eviction.
#
# Environment: HEAPD_BENCH_DIR   where the dump is kept (default /tmp/heapd-bench); an existing dump
#                                is reused unless --fresh
#              HEAPD_BUILD_DIR   the CMake build directory holding bench/histogram_bench
#                                (default: <repo>/build); --build-dir overrides it
#              JAVA_HOME         optional; java, javac and jcmd are taken from its bin/ when set
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")

fresh=0
keep_cache=0
runs=5
scale=1.0
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
bench_flags=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --fresh) fresh=1 ;;
        --runs) runs=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        --scale) scale=$2; shift ;;
        --advise-sequential) bench_flags+=(--advise-sequential) ;;
        --keep-cache) keep_cache=1 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

bench_bin=$build_dir/bench/histogram_bench
if [[ ! -x $bench_bin ]]; then
    echo "no $bench_bin; build it first: cmake -S $repo_dir -B $build_dir -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C $build_dir histogram_bench" >&2
    exit 1
fi


# shellcheck source=bench/bigheap_dump.sh
source "$script_dir/bigheap_dump.sh"
bigheap_work_dir heapd-bigheap

ensure_dump

file_bytes=$(stat -c %s "$dump")

if [[ $keep_cache == 0 ]]; then
    echo "evicting the dump from the page cache and reading it back"
    dd if="$dump" iflag=nocache count=0 status=none
else
    echo "warming the page cache"
fi
cat "$dump" >/dev/null
cat_times=()
for ((i = 0; i < runs; ++i)); do
    t0=$(now_ns)
    cat "$dump" >/dev/null
    t1=$(now_ns)
    cat_times+=($((t1 - t0)))
done
cat_best_ns=$(printf '%s\n' "${cat_times[@]}" | sort -n | head -1)
cat_median_ns=$(printf '%s\n' "${cat_times[@]}" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')

echo "running $bench_bin --runs $runs ${bench_flags[*]} $dump"
bench_out=$work_dir/bench.out
"$bench_bin" --runs "$runs" "${bench_flags[@]}" "$dump" | tee "$bench_out"
summary=$(grep '^summary ' "$bench_out")
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$summary"; }

echo
awk -v bytes="$file_bytes" -v cat_best="$cat_best_ns" -v cat_med="$cat_median_ns" \
    -v best="$(field best_s)" -v med="$(field median_s)" \
    -v wbest="$(field walk_best_s)" -v wmed="$(field walk_median_s)" \
    -v beyond="$(field beyond_mapping_bytes)" -v hwm="$(field vmhwm_bytes)" -v runs="$runs" \
    -v objects="$(field objects)" -v classes="$(field classes)" 'BEGIN {
    printf "%-34s %s\n", "file size", sprintf("%.1f MB (%d bytes)", bytes / 1e6, bytes)
    printf "%-34s %s\n", "objects / classes", sprintf("%d / %d", objects, classes)
    printf "%-34s %10s %10s %10s %10s\n", "(best and median of " runs " runs)", "best s", "GB/s", "median s", "GB/s"
    printf "%-34s %10.3f %10.2f %10.3f %10.2f\n", "cat FILE >/dev/null (warm cache)",
        cat_best / 1e9, bytes / cat_best, cat_med / 1e9, bytes / cat_med
    printf "%-34s %10.3f %10.2f %10.3f %10.2f\n", "histogram pass (map..finish)", best, bytes / best / 1e9, med, bytes / med / 1e9
    printf "%-34s %10.3f %10.2f %10.3f %10.2f\n", "  of which walk_heap + census", wbest, bytes / wbest / 1e9, wmed, bytes / wmed / 1e9
    printf "%-34s %s\n", "peak memory beyond the mapping", sprintf("%.1f MB (VmHWM - RssFile; VmHWM %.1f MB)", beyond / 1e6, hwm / 1e6)
}'
