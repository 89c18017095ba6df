# Sourced by the bench scripts: makes the BigHeap dump both benchmarks use, and cleans up after.
# Sets java_bin, javac_bin, jcmd_bin (from JAVA_HOME when set), dump_dir and dump (in
# HEAPD_BENCH_DIR, default /tmp/heapd-bench). Needs: script_dir, scale, fresh.
# Call bigheap_work_dir NAME first: it makes work_dir, a scratch directory removed on exit.
# shellcheck shell=bash

java_bin=java; javac_bin=javac; jcmd_bin=jcmd
if [[ -n ${JAVA_HOME:-} ]]; then
    java_bin=$JAVA_HOME/bin/java; javac_bin=$JAVA_HOME/bin/javac; jcmd_bin=$JAVA_HOME/bin/jcmd
fi

dump_dir=${HEAPD_BENCH_DIR:-/tmp/heapd-bench}
mkdir -p "$dump_dir"
dump_dir=$(cd "$dump_dir" && pwd)   # jcmd resolves relative paths against the JVM's directory
dump=$dump_dir/bigheap.hprof

bigheap_work_dir() { work_dir=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"); }

jvm_pid=
cleanup() {
    if [[ -n $jvm_pid ]] && kill -0 "$jvm_pid" 2>/dev/null; then
        kill "$jvm_pid" 2>/dev/null || true
        wait "$jvm_pid" 2>/dev/null || true
    fi
    rm -rf "$work_dir"
    rm -f "$dump.partial" "${dump_partial:-$dump.partial}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ns() { date +%s%N; }

# java_dump SOURCE MAIN XMX OUT ARGS...: compiles SOURCE into work_dir, runs MAIN with -XmxXMX and
# ARGS until it prints "ready", dumps its heap to OUT with jcmd, and ends the JVM.
java_dump() {
    local source=$1 main=$2 xmx=$3 out=$4
    shift 4
    echo "compiling $(basename "$source")"
    "$javac_bin" -d "$work_dir" "$source"
    echo "starting the JVM (-Xmx$xmx, $main $*)"
    "$java_bin" "-Xmx$xmx" -cp "$work_dir" "$main" "$@" >"$work_dir/jvm.out" 2>&1 &
    jvm_pid=$!
    local waited=0
    until grep -qx ready "$work_dir/jvm.out" 2>/dev/null; do
        if ! kill -0 "$jvm_pid" 2>/dev/null; then
            echo "the JVM exited before it was ready:" >&2
            cat "$work_dir/jvm.out" >&2
            exit 1
        fi
        if (( waited >= 1200 )); then echo "the JVM was not ready after 600 s" >&2; exit 1; fi
        sleep 0.5
        waited=$((waited + 1))
    done
    echo "dumping the heap of pid $jvm_pid"
    dump_partial=$out.partial
    rm -f "$dump_partial"
    local t0; t0=$(now_ns)
    # HotSpot refuses to overwrite a file, hence the fresh name and the rename.
    "$jcmd_bin" "$jvm_pid" GC.heap_dump "$out.partial" | sed 's/^/  jcmd: /'
    local t1; t1=$(now_ns)
    [[ -s $out.partial ]] || { echo "jcmd wrote no dump" >&2; exit 1; }
    mv -f "$out.partial" "$out"
    kill "$jvm_pid" 2>/dev/null || true
    wait "$jvm_pid" 2>/dev/null || true
    jvm_pid=
    awk -v ns=$((t1 - t0)) 'BEGIN { printf "  dump written in %.1f s\n", ns / 1e9 }'
}

make_dump() {
    # About 1 GB of heap per unit of scale, and room to spare.
    local xmx; xmx=$(awk -v s="$scale" 'BEGIN { x = int(s * 1.3) + 2; print (x < 3 ? 3 : x) "g" }')
    java_dump "$script_dir/BigHeap.java" BigHeap "$xmx" "$dump" "$scale"
}

# Makes the dump unless it exists (and --fresh was not given).
ensure_dump() {
    if [[ $fresh == 1 || ! -s $dump ]]; then
        make_dump
    else
        echo "reusing $dump (pass --fresh to rebuild it)"
    fi
}
