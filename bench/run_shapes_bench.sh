#!/usr/bin/env bash
# Full analysis of one dump of each shape of heap, measured the same way (run_generated_bench.sh
# --dump: the dump evicted from the page cache and read back, `cat FILE >/dev/null`, then
# `heapd analyze` sampled for memory), and one table of them all:
#
#   bigheap        bench/BigHeap.java (JDK of the machine): small objects in maps and lists from
#                  statics, boxed values, a few large arrays; 0.63 GB, 11 M objects at scale 1
#   session-cache  tests/java/SessionCache.java: sessions in a ConcurrentHashMap, each with a
#                  HashMap of small records, short and partly duplicate strings; 0.69 GB, 16 M
#                  objects (43 bytes of dump each) at scale 1
#   generated      bench/hprof_generator --loaders 2: long chains, big maps, lists of shared
#                  strings, payload arrays; 0.83 GB, 14.5 M objects at scale 1
#
#   bench/run_shapes_bench.sh [--shapes "bigheap session-cache generated"] [--scale S] [--dir DIR]
#                             [--fresh] [--keep] [--build-dir DIR] [--memory SIZE]
#
# --scale multiplies each shape's objects (12 makes a session cache of about 8.6 GB and 190 M
# objects; its JVM needs about twice that in heap). Dumps are kept in DIR (default
# /tmp/heapd-shapes-bench) and reused with --keep; --fresh makes them again.
# Environment: HEAPD_BUILD_DIR (default <repo>/build), JAVA_HOME (the JDK; default: the one on PATH).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
shapes="bigheap session-cache generated"
scale=1
dir=/tmp/heapd-shapes-bench
fresh=0
keep=0
memory=
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
while [[ $# -gt 0 ]]; do
    case $1 in
        --shapes) shapes=$2; shift ;;
        --scale) scale=$2; shift ;;
        --dir) dir=$2; shift ;;
        --fresh) fresh=1 ;;
        --keep) keep=1 ;;
        --build-dir) build_dir=$2; shift ;;
        --memory) memory=$2; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export HEAPD_BENCH_DIR=$dir
# shellcheck source=bench/bigheap_dump.sh
source "$script_dir/bigheap_dump.sh"
bigheap_work_dir heapd-shapes
made=()
finish() {
    cleanup
    if [[ $keep == 0 ]]; then for f in "${made[@]}"; do rm -f "$f"; done; fi
}
trap finish EXIT

# Makes the dump of a shape unless it is there (and --fresh was not given); prints its path.
shape_dump() {
    local shape=$1 out
    case $shape in
        bigheap) out=$dir/bigheap-$scale.hprof ;;
        session-cache) out=$dir/session-cache-$scale.hprof ;;
        generated) out=$dir/generated-$scale.hprof ;;
        *) echo "unknown shape: $shape" >&2; exit 2 ;;
    esac
    if [[ $fresh == 0 && -s $out ]]; then
        echo "reusing $out" >&2
    else
        rm -f "$out"
        case $shape in
            bigheap)
                java_dump "$script_dir/BigHeap.java" BigHeap \
                    "$(awk -v s="$scale" 'BEGIN { x = int(s * 1.3) + 2; print (x < 3 ? 3 : x) "g" }')" "$out" "$scale" >&2 ;;
            session-cache)
                java_dump "$repo_dir/tests/java/SessionCache.java" SessionCache \
                    "$(awk -v s="$scale" 'BEGIN { x = int(s * 1.5) + 2; print (x < 3 ? 3 : x) "g" }')" "$out" \
                    "$(awk -v s="$scale" 'BEGIN { printf "%d", 400000 * s }')" >&2 ;;
            generated)
                "$build_dir/bench/hprof_generator" --loaders 2 --size 700M \
                    --round-objects "$(awk -v s="$scale" 'BEGIN { printf "%d", 450000 * s }')" "$out" | head -1 >&2 ;;
        esac
        made+=("$out")
    fi
    echo "$out"
}

results=()
for shape in $shapes; do
    echo "== $shape"
    dump_file=$(shape_dump "$shape")
    args=(--dump "$dump_file" --dir "$dir" --build-dir "$build_dir")
    [[ -z $memory ]] || args+=(--memory "$memory")
    "$script_dir/run_generated_bench.sh" "${args[@]}" 2>/dev/null | tee "$dir/$shape.out" | grep -v '^summary '
    results+=("$shape $(grep '^summary ' "$dir/$shape.out" | cut -d' ' -f2-)")
    rm -f "$dir/$shape.out"
done

echo
echo "$("$build_dir/daemon/heapd" --version 2>/dev/null | head -1), $(grep -m1 CMAKE_BUILD_TYPE: "$build_dir/CMakeCache.txt" | cut -d= -f2), $(nproc) cores"
printf '%-14s %8s %7s %7s %8s %9s %7s %7s %8s %8s %9s\n' shape "dump GB" "M obj" "wall s" "MB/s" "M obj/s" "user s" "sys s" "anon GB" "file GB" "cat MB/s"
for line in "${results[@]}"; do
    # shellcheck disable=SC2086
    set -- $line
    shape=$1
    shift
    declare -A v=()
    for kv in "$@"; do v[${kv%%=*}]=${kv#*=}; done
    awk -v s="$shape" -v b="${v[bytes]}" -v o="${v[objects]}" -v w="${v[wall_s]}" -v u="${v[user_s]}" \
        -v sy="${v[sys_s]}" -v a="${v[anon_mb]}" -v f="${v[file_mb]}" -v c="${v[cat_s]}" 'BEGIN {
        printf "%-14s %8.2f %7.1f %7.2f %8.1f %9.2f %7.2f %7.2f %8.2f %8.2f %9.0f\n",
            s, b / 1e9, o / 1e6, w, b / 1e6 / w, o / 1e6 / w, u, sy, a / 1e3, f / 1e3, b / 1e6 / c }'
    echo "               by phase (s): $(echo "${v[phases]}" | sed 's/:/ /g; s/,/, /g; s/_/ /g')"
    unset v
done
