#!/usr/bin/env bash
# What heapd's OOM watch costs a JVM that never fails: OomWatchCost.java run without the agent and
# with -agentpath:libheapd_agent.so=oom (its breakpoint on OutOfMemoryError(String) set, heapd not
# needed), alternated in one run. Per run: nanoseconds per thrown exception (10 frames of stack),
# per step of a loop of small objects that escape analysis removes, per short-lived allocation pair,
# per arithmetic step, and the JVM's start-to-exit time doing nothing; then the medians and the
# watch's cost against the run without it.
#
#   bench/run_oom_watch_cost.sh [--runs N] [--rounds R] [--build-dir DIR]
#
# Environment: HEAPD_BUILD_DIR  the CMake build directory (default <repo>/build), for daemon/libheapd_agent.so
#              JAVA_HOME        optional; java and javac are taken from its bin/ when set
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
runs=5
rounds=6
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
while [[ $# -gt 0 ]]; do
    case $1 in
        --runs) runs=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
"$javac" -d "$classes" "$script_dir/OomWatchCost.java"

declare -A results
metrics=(exceptions points churn compute startup)
for ((r = 1; r <= runs; r++)); do
    for c in none oom; do
        flags=(-Xmx256m -Xms256m)
        [[ $c == oom ]] && flags+=("-agentpath:$agent=oom,socket=/nonexistent/heapd.sock")
        out=$("$java" "${flags[@]}" -cp "$classes" OomWatchCost "$rounds")
        t0=$(date +%s%N)
        "$java" "${flags[@]}" -cp "$classes" OomWatchCost 0
        start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        line="startup $start_ms"
        for m in exceptions points churn compute; do
            v=$(awk -v m="$m" '{for (i = 1; i < NF; i++) if ($i == m) print $(i + 1)}' <<<"$out" | sort -n |
                awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
            results[$c.$m]+="$v "
            line+="  $m $v"
        done
        results[$c.startup]+="$start_ms "
        printf 'run %d  %-4s  %s\n' "$r" "$c" "$line"
    done
done

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo
printf '%-12s %14s %14s %8s\n' "work" "no agent" "oom watch" "cost"
for m in "${metrics[@]}"; do
    unit=$([[ $m == startup ]] && echo ms || echo ns)
    b=$(median "${results[none.$m]}")
    w=$(median "${results[oom.$m]}")
    awk -v m="$m" -v b="$b" -v w="$w" -v u="$unit" 'BEGIN {printf "%-12s %11.3f %s %11.3f %s %7.1f%%\n", m, b, u, w, u, 100 * (w - b) / b}'
done
