#!/usr/bin/env bash
# Runs the full-analysis benchmark: on the same dump as the histogram benchmark (BigHeap.java),
# times `cat FILE >/dev/null`, `heapd analyze` (the object graph, dominator tree and retained sizes
# included, and without them; and with --memory, its big arrays then spilled to a file beyond
# three quarters of it) and VisualVM's heap library computing retained sizes for the top
# objects (tests/java/RetainedSizes.java), with each one's wall time and peak memory. heapd runs
# with --no-index (analyzed afresh each time), then once more reading the analysis index.
#
#   bench/run_analysis_bench.sh [--fresh] [--runs N] [--visualvm-runs N] [--build-dir DIR] [--scale S]
#                               [--top N] [--visualvm-xmx SIZE] [--no-visualvm] [--keep-cache]
#                               [--spill-memory SIZE (default 256M; 0: no such run)] [--cgroup SIZE]
#                               [--skip-histogram] [--skip-index]
#
# --cgroup SIZE also times heapd analyze, with no limit of its own, in a memory cgroup of SIZE (as
# under systemd's MemoryMax=): it spills what the cgroup has no room for. Needs root.
#
# Before timing, the dump's pages are evicted from the page cache (dd iflag=nocache) and read back
# once, so every tool starts from the same cache state; --keep-cache skips the eviction.
#
# Environment: HEAPD_BENCH_DIR     where the dump is kept (default /tmp/heapd-bench); an existing
#                                  dump is reused unless --fresh
#              HEAPD_BUILD_DIR     the CMake build directory holding daemon/heapd (default: <repo>/build);
#                                  --build-dir overrides it
#              VISUALVM_HEAP_JAR   VisualVM's heap library (default: the Debian visualvm package's)
#              JAVA_HOME           optional; java, javac and jcmd are taken from its bin/ when set
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")

fresh=0
keep_cache=0
runs=3
vv_runs=1
scale=1.0
top=20
vv_xmx=2g
visualvm=1
spill_memory=256M
cgroup_memory=
skip_histogram=0
skip_index=0
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
vv_jar=${VISUALVM_HEAP_JAR:-/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar}
while [[ $# -gt 0 ]]; do
    case $1 in
        --fresh) fresh=1 ;;
        --runs) runs=$2; shift ;;
        --visualvm-runs) vv_runs=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        --scale) scale=$2; shift ;;
        --top) top=$2; shift ;;
        --visualvm-xmx) vv_xmx=$2; shift ;;
        --no-visualvm) visualvm=0 ;;
        --keep-cache) keep_cache=1 ;;
        --spill-memory) spill_memory=$2; shift ;;
        --cgroup) cgroup_memory=$2; shift ;;
        --skip-histogram) skip_histogram=1 ;;
        --skip-index) skip_index=1 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

heapd_bin=$build_dir/daemon/heapd
if [[ ! -x $heapd_bin ]]; then
    echo "no $heapd_bin; build it first: cmake -S $repo_dir -B $build_dir -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C $build_dir heapd" >&2
    exit 1
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null || true)
if [[ ! -x /usr/bin/time ]]; then
    echo "/usr/bin/time is needed for peak memory (Debian package time)" >&2
    exit 1
fi
if [[ $visualvm == 1 && ! -f $vv_jar ]]; then
    echo "no VisualVM heap library at $vv_jar (Debian package visualvm, or set VISUALVM_HEAP_JAR; --no-visualvm skips it)" >&2
    exit 1
fi


# The same dump as bench/run_histogram_bench.sh makes (and that script reuses this one's).
# shellcheck source=bench/bigheap_dump.sh
source "$script_dir/bigheap_dump.sh"
bigheap_work_dir heapd-analysis-bench

ensure_dump
file_bytes=$(stat -c %s "$dump")

if [[ $visualvm == 1 ]]; then
    echo "compiling RetainedSizes.java against $vv_jar"
    "$javac_bin" -d "$work_dir/classes" -cp "$vv_jar" "$repo_dir/tests/java/RetainedSizes.java"
fi

if [[ $keep_cache == 0 ]]; then
    echo "evicting the dump from the page cache and reading it back"
    dd if="$dump" iflag=nocache count=0 status=none
else
    echo "warming the page cache"
fi
cat "$dump" >/dev/null

# measure NAME OUT CMD...: runs CMD under /usr/bin/time with stdout to OUT, samples its anonymous
# memory every 50 ms, and appends "NAME wall_ns maxrss_kb user_s sys_s peak_anon_kb" to results.
results=$work_dir/results
measure() {
    local name=$1 out=$2
    shift 2
    local t0 t1 pid child= anon peak_anon=0
    t0=$(now_ns)
    /usr/bin/time -f '%M %U %S' -o "$work_dir/time.out" "$@" >"$out" 2>"$work_dir/stderr" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        [[ -n $child ]] || child=$(pgrep -P "$pid" | head -1 || true)
        if [[ -n $child ]]; then
            anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$child/status" 2>/dev/null || true)
            if [[ -n $anon ]] && (( anon > peak_anon )); then peak_anon=$anon; fi
        fi
        sleep 0.05
    done
    local rc=0
    wait "$pid" || rc=$?
    t1=$(now_ns)
    if [[ $rc != 0 ]]; then
        echo "$name failed (exit $rc):" >&2
        cat "$work_dir/stderr" >&2
        exit 1
    fi
    echo "$name $((t1 - t0)) $(tail -1 "$work_dir/time.out") $peak_anon" >>"$results"
}

echo "timing cat FILE >/dev/null ($runs runs)"
for ((i = 0; i < runs; ++i)); do measure cat /dev/null cat "$dump"; done
if [[ $skip_histogram == 0 ]]; then
    echo "timing heapd analyze --no-retained ($runs runs)"
    for ((i = 0; i < runs; ++i)); do measure histogram /dev/null "$heapd_bin" analyze --no-index --no-retained "$dump"; done
fi
echo "timing heapd analyze ($runs runs)"
for ((i = 0; i < runs; ++i)); do
    measure retained "$work_dir/heapd.out" "$heapd_bin" analyze --no-index --top "$top" "$dump"
done
if [[ $spill_memory != 0 ]]; then
    echo "timing heapd analyze --memory $spill_memory, big arrays spilled beyond it ($runs runs)"
    for ((i = 0; i < runs; ++i)); do
        measure spilled "$work_dir/spilled.out" "$heapd_bin" analyze --no-index --top "$top" \
            --memory "$spill_memory" --spill-dir "$work_dir" "$dump"
    done
    sed 's/^/  /' "$work_dir/stderr"   # how much was spilled
    cmp -s "$work_dir/heapd.out" "$work_dir/spilled.out" && echo "  the same report as without a limit" ||
        echo "  THE REPORT DIFFERS from the one without a limit"
fi
if [[ -n $cgroup_memory ]]; then
    group=
    for parent in /sys/fs/cgroup/memory:memory.limit_in_bytes /sys/fs/cgroup/unified:memory.max /sys/fs/cgroup:memory.max; do
        dir=${parent%%:*}/heapd-bench-$$
        if mkdir "$dir" 2>/dev/null; then
            if echo "$cgroup_memory" >"$dir/${parent##*:}" 2>/dev/null; then group=$dir; break; fi
            rmdir "$dir"
        fi
    done
    [[ -n $group ]] || { echo "no memory cgroup can be made here (root, cgroup v1 or v2 memory controller)" >&2; exit 1; }
    echo "timing heapd analyze in a memory cgroup of $cgroup_memory ($runs runs)"
    for ((i = 0; i < runs; ++i)); do
        measure cgroup "$work_dir/cgroup.out" sh -c 'echo $$ >"$0" && exec "$@"' "$group/cgroup.procs" \
            "$heapd_bin" analyze --no-index --top "$top" --spill-dir "$work_dir" "$dump"
    done
    rmdir "$group"
    sed 's/^/  /' "$work_dir/stderr"
    cmp -s "$work_dir/heapd.out" "$work_dir/cgroup.out" && echo "  the same report as without a limit" ||
        echo "  THE REPORT DIFFERS from the one without a limit"
fi
if [[ $skip_index == 0 ]]; then
    # The analysis index: written once (into the work directory), then every later analysis reads it.
    "$heapd_bin" analyze --index-dir "$work_dir" "$dump" >/dev/null
    echo "timing heapd analyze with its index ($runs runs)"
    for ((i = 0; i < runs; ++i)); do
        measure indexed /dev/null "$heapd_bin" analyze --index-dir "$work_dir" --top "$top" "$dump"
    done
fi
if [[ $visualvm == 1 ]]; then
    echo "timing VisualVM's heap library: RetainedSizes FILE $top with -Xmx$vv_xmx ($vv_runs runs)"
    for ((i = 0; i < vv_runs; ++i)); do
        measure visualvm "$work_dir/visualvm.out" "$java_bin" "-Xmx$vv_xmx" -cp "$work_dir/classes:$vv_jar" \
            RetainedSizes "$dump" "$top"
        sed 's/^/  /' "$work_dir/stderr"   # its own split: opening the dump, then retained sizes
    done
fi

echo
echo "heapd's biggest retainers (top 3):"
grep -A3 '^ *# *Retained  Share' "$work_dir/heapd.out" | tail -3 || true
if [[ $visualvm == 1 ]]; then
    echo "VisualVM's (id retained shallow class; the retained sizes of class objects leave out their own size):"
    head -3 "$work_dir/visualvm.out" | while read -r id retained shallow class; do
        printf '  0x%x %s %s %s\n' "$id" "$retained" "$shallow" "$class"
    done
fi

echo
awk -v bytes="$file_bytes" -v build="${build_type:-unknown}" -v xmx="$vv_xmx" -v spill="$spill_memory" -v cgroup="$cgroup_memory" '
    { n[$1]++; w = $2 / 1e9; wall[$1, n[$1]] = w
      if (!($1 in best) || w < best[$1]) best[$1] = w
      if ($3 > rss[$1]) rss[$1] = $3
      if ($6 > anon[$1]) anon[$1] = $6 }
    function median(k,   m, i, j, t, v) {
        m = n[k]; for (i = 1; i <= m; i++) v[i] = wall[k, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    }
    function row(k, label) {
        if (!(k in n)) return
        printf "%-36s %5d %9.3f %9.1f %9.3f %10.1f %10.1f\n", label, n[k], best[k], bytes / best[k] / 1e6,
            median(k), rss[k] / 1024 * 1.048576, anon[k] / 1024 * 1.048576
    }
    END {
        printf "file: %.1f MB (%.0f bytes); heapd build type: %s\n", bytes / 1e6, bytes, build
        printf "%-36s %5s %9s %9s %9s %10s %10s\n", "", "runs", "best s", "MB/s", "median s", "max RSS MB", "anon MB"
        row("cat", "cat FILE >/dev/null (warm cache)")
        row("histogram", "heapd analyze --no-retained")
        row("retained", "heapd analyze (retained sizes)")
        row("spilled", "heapd analyze --memory " spill " (spilled)")
        row("cgroup", "heapd analyze in a cgroup of " cgroup)
        row("indexed", "heapd analyze, second time (index)")
        row("visualvm", "VisualVM RetainedSizes (-Xmx" xmx ")")
        print "MB = 10^6 bytes. max RSS: peak resident set (/usr/bin/time), mapped file pages included;"
        print "anon MB: peak RssAnon sampled every 50 ms (memory beyond the file; a JVM counts its heap)."
    }' "$results"
