#!/usr/bin/env bash
# The allocation-sampling agent's overhead: an allocation-heavy program (AllocChurn.java: 16 to
# 1,040-byte arrays and objects from two threads, most dying young) run without the agent and with
# it sampling from the start (-agentpath:...=start) every 512 KiB (HotSpot's default) and every
# 64 KiB, the three alternated in one run; prints each run's allocations per second, then the
# medians and each interval's cost against the run without the agent.
#
#   bench/run_sampling_bench.sh [--runs N] [--seconds S] [--threads T] [--work W] [--build-dir DIR]
#
# --work W: W rounds of arithmetic between allocations (default 0: allocation as fast as it goes, far
# beyond real services; the agent's cost grows with the samples per second, so say the rate).
#
# Environment: HEAPD_BUILD_DIR  the CMake build directory (default <repo>/build), for daemon/libheapd_agent.so
#              JAVA_HOME        optional; java and javac are taken from its bin/ when set
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
runs=5
seconds=10
threads=2
work=0
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift ;;
        --seconds) seconds=$2; shift ;;
        --threads) threads=$2; shift ;;
        --work) work=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
javac=${JAVA_HOME:+$JAVA_HOME/bin/}javac
agent=$build_dir/daemon/libheapd_agent.so
[[ -f $agent ]] || { echo "no $agent: build heapd_agent first" >&2; exit 1; }
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
"$javac" -d "$classes" "$script_dir/AllocChurn.java"

declare -A results
configs=(none 524288 65536)
for ((r = 1; r <= runs; r++)); do
    for c in "${configs[@]}"; do
        flags=(-Xmx1g -Xms1g)
        [[ $c != none ]] && flags+=("-agentpath:$agent=start,interval=$c,depth=16")
        out=$("$java" "${flags[@]}" -cp "$classes" AllocChurn 3 "$seconds" "$threads" "$work")
        rate=$(awk '/allocations_per_second/ {print $2}' <<<"$out")
        bytes=$(awk '/bytes_per_second/ {print $2}' <<<"$out")
        results[$c]+="$rate "
        printf 'run %d  %-7s  %12.0f allocations/s  %6.2f GB/s allocated\n' "$r" "$c" "$rate" "$(awk -v b="$bytes" 'BEGIN {print b / 1e9}')"
    done
done

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
base=$(median "${results[none]}")
echo
printf '%-22s %14s %10s\n' "sampling" "median/s" "cost"
for c in "${configs[@]}"; do
    m=$(median "${results[$c]}")
    label=$([[ $c == none ]] && echo "none (no agent)" || echo "every $((c / 1024)) KiB")
    awk -v m="$m" -v b="$base" -v l="$label" 'BEGIN {printf "%-22s %14.0f %9.1f%%\n", l, m, 100 * (b - m) / b}'
done
