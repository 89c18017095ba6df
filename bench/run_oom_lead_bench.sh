#!/usr/bin/env bash
# The lead time of a memory rule before the kernel's OOM kill: a JVM (tests/java/OffHeap.java,
# -Xmx64m, 20 MiB of direct buffers) in a memory cgroup of 400 MiB leaks direct buffers at RATE
# MiB/s; heapd serve (polling every 500 ms) has one rule: "share" (memory_percent = 70) or "trend"
# (memory_full_within = "60s" over memory_window = "6s"). Per rate and rule: when the rule's dump
# job was made and when it ended (its dump written and analyzed), when the JVM died (heapd's death
# record), and the lead: seconds from the evidence kept to the kill.
#
#   bench/run_oom_lead_bench.sh [--rates "10 100"] [--rules "share trend"] [--build-dir DIR]
#
# Root (it makes a cgroup v1 memory cgroup). Environment: HEAPD_BUILD_DIR, the CMake build directory
# (default <repo>/build), for heapd, heapctl and the compiled test programs.
set -uo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
rates="10 100"
rules="share trend"
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
while [[ $# -gt 0 ]]; do
    case $1 in
        --rates) rates=$2; shift ;;
        --rules) rules=$2; shift ;;
        --build-dir) build_dir=$2; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
heapd=$build_dir/daemon/heapd
heapctl=$build_dir/cli/heapctl
classes=$(dirname "$(ls -t $(find "$build_dir/tests" -name OffHeap.class) | head -1)")
[[ -x $heapd && -x $heapctl && -d $classes ]] || { echo "build heapd, heapctl and the tests first" >&2; exit 1; }
[[ -d /sys/fs/cgroup/memory ]] || { echo "no cgroup v1 memory hierarchy" >&2; exit 1; }

work=$(mktemp -d /tmp/heapd-lead-XXXXXX)
chmod 755 "$work"
cgroup=/sys/fs/cgroup/memory/heapd-lead-$$
daemon=""
cleanup() {
    [[ -z $daemon ]] || kill "$daemon" 2>/dev/null || true
    if [[ -d $cgroup ]]; then
        while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$cgroup/cgroup.procs"
        sleep 0.5
        rmdir "$cgroup" 2>/dev/null || true
    fi
    wait 2>/dev/null || true
    [[ -n ${HEAPD_KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

printf '%-8s %-7s %-12s %-14s %-10s %-8s %s\n' "MiB/s" "rule" "rule fired" "evidence kept" "JVM died" "lead" "dump job"
for rate in $rates; do
for rule in $rules; do
    case $rule in
        share) condition='memory_percent = 70' ;;
        trend) condition=$'memory_full_within = "60s"\nmemory_window = "6s"' ;;
        *) echo "unknown rule: $rule (share or trend)" >&2; exit 2 ;;
    esac
    mkdir "$cgroup"
    echo $((400 << 20)) >"$cgroup/memory.limit_in_bytes"
    run=$rate-$rule
    marker=heapd.lead.$$.$rate.$rule
    store=$work/store-$run
    socket=$work/heapd-$run.sock
    cat >"$work/heapd.toml" <<TOML
[daemon]
poll_interval = "500ms"
[[rule]]
name = "$rule"
command = "$marker"
$condition
TOML
    "$heapd" serve --foreground --config "$work/heapd.toml" --socket "$socket" --store "$store" 2>"$work/log-$run" &
    daemon=$!
    for _ in $(seq 100); do "$heapctl" --socket "$socket" status >/dev/null 2>&1 && break; sleep 0.1; done
    sh -c "echo \$\$ >$cgroup/cgroup.procs; exec java -D$marker=1 -Xmx64m -XX:MaxDirectMemorySize=4g -cp $classes OffHeap 20 5 $work/grow-$run $rate" >"$work/jvm-$run.out" 2>&1 &
    for _ in $(seq 300); do grep -q ready "$work/jvm-$run.out" && break; sleep 0.1; done
    sleep 8  # watched, and a trend window of it holding still
    start=$(date +%s%3N)
    touch "$work/grow-$run"
    died=""
    for _ in $(seq 1200); do
        died=$("$heapctl" --socket "$socket" deaths --json 2>/dev/null | json "d[0]['death']['died_ms'] if d else ''")
        [[ -z $died ]] || break
        sleep 0.1
    done
    sleep 2  # the job ends (its analysis goes on after the death)
    jobs=$("$heapctl" --socket "$socket" jobs --json 2>&1 || true)
    created=$(json "d[-1]['created_ms'] if d else 0" <<<"$jobs")
    finished=$(json "d[-1]['finished_ms'] if d else 0" <<<"$jobs")
    state=$(json "d[-1]['state'] + ((': ' + str(d[-1]['error'])[:70]) if d[-1].get('error') else '') if d else 'none'" <<<"$jobs")
    secs() { [[ $1 -gt 0 ]] && awk -v a="$1" -v b="$start" 'BEGIN { printf "%.1f s", (a - b) / 1000 }' || echo "-"; }
    lead="-"
    [[ $finished -gt 0 && -n $died ]] && lead=$(awk -v a="$died" -v b="$finished" 'BEGIN { printf "%.1f s", (a - b) / 1000 }')
    printf '%-8s %-7s %-12s %-14s %-10s %-8s %s\n' "$rate" "$rule" "$(secs "$created")" "$(secs "$finished")" \
        "$(secs "${died:-0}")" "$lead" "$state"
    kill "$daemon"
    wait "$daemon" 2>/dev/null || true
    daemon=""
    rmdir "$cgroup"
done
done
