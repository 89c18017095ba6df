#!/usr/bin/env bash
# From OutOfMemoryError to report, for a JVM started with nothing but
# -XX:OnOutOfMemoryError='heapd dump %p' whose main thread fills a static map until the error kills
# it and the JVM exits (tests/java/OomExit.java), for each heap size given. A `heapd serve` of the
# build runs on a temporary socket and store and arms the JVM; then the JVM leaks. Printed per size:
#   dump written   the JVM writing its own dump at the error (HotSpot's "Heap dump file created ... in T secs")
#   hook held      how long the JVM waited for its hook (time stamps around it, with the shell)
#   error→report   from the hook's start to `heapctl report PID` answering (dump copied into the
#                  store, analyzed, report kept); the JVM had exited long before
#   JVM exit       from the hook's start to the JVM's end
# and, as a baseline, `cat DUMP >/dev/null` of a dump of the same size (the copy into the store
# reads it once). With --snapshot the JVM has -XX:+DisableAttachMechanism, so it cannot be armed:
# its hook holds it while the daemon takes a core (gdb), then the core is converted (jhsdb); "dump
# written" is then the hook's hold.
#
#   bench/run_oom_bench.sh [--build-dir DIR] [--snapshot] [SIZE...]   (sizes as -Xmx takes them; default 512m 2g)
#
# Needs root (the daemon attaches as the JVM's user), java and javac, and free space in /tmp for
# twice the largest heap.
set -euo pipefail
script_dir=$(cd "$(dirname "$0")" && pwd)
build_dir=${HEAPD_BUILD_DIR:-$script_dir/../build}
sizes=()
snapshot=
while [[ $# -gt 0 ]]; do
    case $1 in
        --build-dir) build_dir=$2; shift 2 ;;
        --snapshot) snapshot=1; shift ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) sizes+=("$1"); shift ;;
    esac
done
[[ ${#sizes[@]} -gt 0 ]] || sizes=(512m 2g)
heapd=$build_dir/daemon/heapd
heapctl=$build_dir/cli/heapctl
[[ -x $heapd && -x $heapctl ]] || { echo "build heapd and heapctl first ($build_dir)" >&2; exit 2; }

work=$(mktemp -d /tmp/heapd-oom-bench.XXXXXX)
chmod 755 "$work"
daemon_pid= jvm_pid=
cleanup() {
    [[ -n $jvm_pid ]] && kill "$jvm_pid" 2>/dev/null || true
    [[ -n $daemon_pid ]] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

javac -d "$work/classes" "$script_dir/../tests/java/OomExit.java"
socket=$work/heapd.sock
"$heapd" serve --foreground --socket "$socket" --store "$work/store" --spool "" --config "" 2>"$work/heapd.log" &
daemon_pid=$!
for _ in $(seq 100); do "$heapctl" --socket "$socket" status >/dev/null 2>&1 && break; sleep 0.1; done
ctl() { "$heapctl" --socket "$socket" "$@"; }
now_ns() { date +%s%N; }

printf '%-6s  %13s  %10s  %13s  %9s  %12s  %s\n' heap "dump written" "hook held" "error→report" "JVM exit" "cat (dump)" "dump size"
for size in "${sizes[@]}"; do
    run=$work/$size
    mkdir -p "$run"
    hook="date +%s%N > $run/t0;$heapd dump %p --socket $socket --spool $run/spool;date +%s%N > $run/t1"
    extra=()
    want=oom-armed
    if [[ -n $snapshot ]]; then extra=(-XX:+DisableAttachMechanism); want=oom-NOT; fi
    java "-Xmx$size" "${extra[@]}" "-XX:OnOutOfMemoryError=$hook" -cp "$work/classes" OomExit "$run/go" >"$run/out" 2>&1 &
    jvm_pid=$!
    for _ in $(seq 300); do ctl jvms 2>/dev/null | grep -qE "^ *$jvm_pid .*$want" && break; sleep 0.1; done
    ctl jvms | grep -qE "^ *$jvm_pid .*$want" || { echo "pid $jvm_pid is not $want" >&2; cat "$work/heapd.log" >&2; exit 1; }
    touch "$run/go"
    while [[ ! -s $run/t0 ]]; do sleep 0.01; done
    exited=
    reported=
    while [[ -z $reported ]]; do
        [[ -z $exited ]] && ! kill -0 "$jvm_pid" 2>/dev/null && exited=$(now_ns)
        ctl report "$jvm_pid" >/dev/null 2>&1 && reported=$(now_ns)
        sleep 0.05
    done
    wait "$jvm_pid" 2>/dev/null || true
    [[ -n $exited ]] || exited=$(now_ns)
    jvm_pid=
    t0=$(cat "$run/t0") t1=$(cat "$run/t1")
    entry=$(ls -d "$work"/store/entries/*/ | tail -1)
    written=$(sed -n 's/.*Heap dump file created \[\([0-9]*\) bytes in \([0-9.]*\) secs\].*/\2 s/p' "$run/out")
    bytes=$(stat -c %s "$entry/dump.hprof")
    [[ -n $written ]] || written="(snapshot)"
    # The baseline: reading a file of the dump's size once (the store's copy of the dump).
    sync
    echo 3 > /proc/sys/vm/drop_caches
    c0=$(now_ns); cat "$entry/dump.hprof" >/dev/null; c1=$(now_ns)
    ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f ms", (b - a) / 1e6 }'; }
    printf '%-6s  %13s  %10s  %13s  %9s  %12s  %s\n' "$size" "$written" "$(ms "$t0" "$t1")" "$(ms "$t0" "$reported")" \
        "$(ms "$t0" "$exited")" "$(ms "$c0" "$c1")" "$(numfmt --to=iec "$bytes")"
    ctl rm "$(basename "$entry")" >/dev/null
done
