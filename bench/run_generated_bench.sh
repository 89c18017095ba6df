#!/usr/bin/env bash
# Full analysis of a generated dump of any size, bigger than the machine's memory if asked for
# (bench/hprof_generator: long chains, big maps, lists, many strings, payloads, four class loaders):
# generates it, times `cat FILE >/dev/null` and `heapd analyze` (all of it: histogram, threads,
# waste, object graph, dominator tree, suspects), samples the analysis's anonymous and file-backed
# memory, checks the report against the bytes the generator says each Holder list retains, and
# deletes the dump unless --keep.
#
#   bench/run_generated_bench.sh [--size SIZE (default 8G)] [--memory SIZE] [--dir DIR] [--keep]
#                                [--reuse] [--build-dir DIR] [--sample-ms N] [--dump FILE]
#
# --dump FILE measures that dump instead (BigHeap's, a real JVM's): no generator, no check against
# it, and the file is left alone; its objects are counted from heapd's report.
# --memory SIZE passes heapd analyze --memory SIZE: the anonymous memory it may take; its big arrays
# go to a spill file in DIR beyond three quarters of it. Without it heapd spills beyond half of
# the memory available. --reuse keeps a dump already in DIR (made with the same --size).
#
# Environment: HEAPD_BUILD_DIR  the CMake build directory (default: <repo>/build); --build-dir overrides it
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(dirname "$script_dir")
size=8G
memory=
dir=/tmp/heapd-generated-bench
keep=0
reuse=0
sample_ms=50
build_dir=${HEAPD_BUILD_DIR:-$repo_dir/build}
given_dump=
while [[ $# -gt 0 ]]; do
    case $1 in
        --size) size=$2; shift ;;
        --memory) memory=$2; shift ;;
        --dir) dir=$2; shift ;;
        --keep) keep=1 ;;
        --reuse) reuse=1 ;;
        --build-dir) build_dir=$2; shift ;;
        --sample-ms) sample_ms=$2; shift ;;
        --dump) given_dump=$2; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

heapd_bin=$build_dir/daemon/heapd
generator=$build_dir/bench/hprof_generator
for bin in "$heapd_bin" "$generator"; do
    if [[ ! -x $bin ]]; then
        echo "no $bin; build it first: cmake -S $repo_dir -B $build_dir -G Ninja && ninja -C $build_dir" >&2
        exit 1
    fi
done
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time is needed (Debian package time)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON report" >&2; exit 1; }

mkdir -p "$dir"
dump=$dir/generated-$size.hprof
[[ -z $given_dump ]] || { dump=$given_dump; keep=1; }
cleanup() {
    if [[ $keep == 0 ]]; then rm -f "$dump"; fi
    rm -f "$dir/report.json" "$dir/time.out" "$dir/progress.log" "$dir/progress.fifo" "$dir/summary.txt"
}
trap cleanup EXIT

now_ns() { date +%s%N; }
seconds() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e9 }'; }

if [[ -n $given_dump ]]; then
    echo "measuring $dump"
elif [[ $reuse == 1 && -f $dump && -f $dump.generator ]]; then
    echo "reusing $dump"
else
    echo "generating $dump (--size $size)"
    "$generator" --size "$size" "$dump" | tee "$dump.generator"
fi
file_bytes=$(stat -c %s "$dump")
objects=0
[[ -n $given_dump ]] || objects=$(awk '/^wrote/ { print $5 }' "$dump.generator")
echo "free memory: $(awk '/^MemAvailable:/ { printf "%.1f GB", $2 * 1024 / 1e9 }' /proc/meminfo) available" \
    "of $(awk '/^MemTotal:/ { printf "%.1f GB", $2 * 1024 / 1e9 }' /proc/meminfo); disk: $(df -h --output=avail "$dir" | tail -1 | tr -d ' ') free in $dir"

echo "timing cat FILE >/dev/null"
dd if="$dump" iflag=nocache count=0 status=none
t0=$(now_ns)
cat "$dump" >/dev/null
cat_ns=$(( $(now_ns) - t0 ))
echo "  $(seconds $cat_ns) s, $(awk -v b="$file_bytes" -v ns="$cat_ns" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }') MB/s"

args=(analyze --no-index --json --top 100 --progress --spill-dir "$dir")
[[ -z $memory ]] || args+=(--memory "$memory")
echo "timing heapd ${args[*]} $dump"
# Each progress line with the time it came (the phases' split is read from them); a terminal sees them too.
stamp_progress() {
    while IFS= read -r line; do
        printf '%s %s\n' "$EPOCHREALTIME" "$line" >>"$dir/progress.log"
        printf '%s\n' "$line" >&2
    done
}
rm -f "$dir/progress.log" "$dir/progress.fifo"
mkfifo "$dir/progress.fifo"
stamp_progress <"$dir/progress.fifo" &
stamper=$!
t0=$(now_ns)
t0_real=$EPOCHREALTIME
/usr/bin/time -f '%U %S %M' -o "$dir/time.out" "$heapd_bin" "${args[@]}" "$dump" >"$dir/report.json" \
    2>"$dir/progress.fifo" &
pid=$!
child= peak_anon=0 file_at_peak=0 peak_file=0
while kill -0 "$pid" 2>/dev/null; do
    [[ -n $child ]] || child=$(pgrep -P "$pid" | head -1 || true)
    if [[ -n $child ]]; then
        read -r anon file < <(awk '/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } END { print a + 0, f + 0 }' \
            "/proc/$child/status" 2>/dev/null || echo "0 0")
        if (( anon > peak_anon )); then peak_anon=$anon; file_at_peak=$file; fi
        if (( file > peak_file )); then peak_file=$file; fi
    fi
    sleep "$(awk -v ms="$sample_ms" 'BEGIN { print ms / 1000 }')"
done
rc=0
wait "$pid" || rc=$?
wall_ns=$(( $(now_ns) - t0 ))
if [[ $rc != 0 ]]; then
    echo "heapd analyze failed (exit $rc)" >&2
    exit 1
fi
read -r user_s sys_s maxrss_kb <"$dir/time.out"
if [[ -n $given_dump ]]; then
    objects=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]
print(s["instances"] + s["object_arrays"] + s["primitive_arrays"] + s["classes"])' "$dir/report.json")
fi

awk -v b="$file_bytes" -v o="$objects" -v ns="$wall_ns" -v u="$user_s" -v s="$sys_s" -v rss="$maxrss_kb" \
    -v anon="$peak_anon" -v filep="$file_at_peak" -v pfile="$peak_file" -v cat_ns="$cat_ns" 'BEGIN {
    t = ns / 1e9
    printf "\n%-34s %12s\n", "dump", sprintf("%.2f GB", b / 1e9)
    printf "%-34s %12s\n", "objects", sprintf("%.1f M", o / 1e6)
    printf "%-34s %12s %s\n", "cat FILE >/dev/null", sprintf("%.1f s", cat_ns / 1e9), sprintf("(%.0f MB/s)", b / 1e6 / (cat_ns / 1e9))
    printf "%-34s %12s\n", "heapd analyze, wall", sprintf("%.1f s", t)
    printf "%-34s %12s\n", "  throughput", sprintf("%.1f MB/s", b / 1e6 / t)
    printf "%-34s %12s\n", "  objects per second", sprintf("%.2f M", o / 1e6 / t)
    printf "%-34s %12s\n", "  CPU user + system", sprintf("%.1f + %.1f s", u, s)
    printf "%-34s %12s\n", "  cores busy on average", sprintf("%.2f", (u + s) / t)
    printf "%-34s %12s\n", "  peak RSS", sprintf("%.2f GB", rss * 1024 / 1e9)
    printf "%-34s %12s %s\n", "  peak anonymous memory", sprintf("%.2f GB", anon * 1024 / 1e9), sprintf("(%.1f bytes per object)", anon * 1024 / o)
    printf "%-34s %12s\n", "  file pages resident at that time", sprintf("%.2f GB", filep * 1024 / 1e9)
    printf "%-34s %12s\n", "  file pages resident at most", sprintf("%.2f GB", pfile * 1024 / 1e9)
}'
# The split by phase: from each phase's first progress line to the next phase's (the last to the end).
wait "$stamper"
phases=$(awk -v t0="$t0_real" -v end="$(awk -v a="$t0_real" -v ns="$wall_ns" 'BEGIN { printf "%.6f", a + ns / 1e9 }')" '
    { if (match($0, /%  [a-z][a-z -]*[a-z]  /) == 0) next
      name = substr($0, RSTART + 3, RLENGTH - 5)
      if (name != last) { names[++n] = name; at[n] = $1; last = name } }
    END { for (i = 1; i <= n; i++) { to = i < n ? at[i + 1] : end
                                     printf "%s%s %.2f", (i > 1 ? ", " : ""), names[i], to - at[i] } }' \
    "$dir/progress.log")
printf "%-34s %s\n" "  by phase (s)" "$phases"
phases_key=$(echo "$phases" | sed 's/, /,/g; s/ \([0-9.]*\)\(,\|$\)/:\1\2/g; s/ /_/g')
# One line for scripts (bench/run_shapes_bench.sh).
awk -v b="$file_bytes" -v o="$objects" -v ns="$wall_ns" -v u="$user_s" -v s="$sys_s" -v anon="$peak_anon" \
    -v filep="$file_at_peak" -v cat_ns="$cat_ns" -v phases="$phases_key" 'BEGIN {
    t = ns / 1e9
    printf "summary bytes=%.0f objects=%.0f wall_s=%.2f mb_s=%.1f objects_s=%.0f user_s=%.2f sys_s=%.2f anon_mb=%.0f file_mb=%.0f cat_s=%.2f phases=%s\n",
        b, o, t, b / 1e6 / t, o / t, u, s, anon * 1024 / 1e6, filep * 1024 / 1e6, cat_ns / 1e9, phases
}' >"$dir/summary.txt"
cat "$dir/summary.txt"

# The report against the generator: objects, and what each Holder list retains.
[[ -z $given_dump ]] || exit 0
python3 - "$dir/report.json" "$dump.generator" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
expected = {}
objects = 0
for line in open(sys.argv[2]):
    words = line.split()
    if words and words[0] == "holder":
        expected[int(words[1])] = (words[2], int(words[3]), int(words[4]))
    elif words and words[0] == "wrote":
        objects = int(words[4])
s = report["summary"]
counted = s["instances"] + s["object_arrays"] + s["primitive_arrays"] + s["classes"]
print(f"objects in the report: {counted} ({'the same as' if counted == objects else 'NOT the same as'} the generator's {objects})")
ours = {d["id"]: d["retained_bytes"] for d in report["dominators"]}
same = sum(1 for i, (_, _, r) in expected.items() if ours.get(i) == r)
missing = [i for i in expected if i not in ours]
print(f"Holder lists retaining what the generator counted: {same} of {len(expected)}"
      + (f" ({len(missing)} not among the top 100 retainers)" if missing else ""))
for sus in report["leak_suspects"]["suspects"][:4]:
    what = sus.get("object", {}).get("class", sus.get("class", "?"))
    point = sus.get("accumulation_point", {}).get("class", "")
    print(f"  suspect: {sus['retained_bytes'] / 1e9:.2f} GB ({100 * sus['share']:.1f}%) retained by {what}"
          + (f", accumulating in {point}" if point else ""))
EOF
if [[ $keep == 0 ]]; then echo "deleting $dump"; rm -f "$dump.generator"; fi
