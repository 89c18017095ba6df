#!/usr/bin/env bash
# heapd fleet over a big bucket: REPORTS generated reports (default 10000) from HOSTS hosts (default
# 500), each host running two of 20 services, each JVM dumped several times as its leak grows, laid
# out as heapd upload lays them out (PREFIX/HOST/SERVICE/ID/ with summary.json, report.json and
# report.html; the last two small stand-ins) and put in an S3 server on the loopback
# (tests/support/s3_test_server.js: s3rver behind a SigV4 check) by one curl. Then, each timed with
# its peak memory and heapd's own CPU time (/usr/bin/time; the rest is the server): the first run (every summary read), a run with nothing new (the
# listing only: every report from the index), a run after NEW more reports (default 10) were
# uploaded, and the page (--html). Baseline in the same run: curl getting the first 1000 summaries
# one by one over one connection.
#
#   bench/run_fleet_bench.sh [--build-dir DIR] [--reports N] [--hosts N] [--new N] [--keep]
#
# Needs root, node and s3rver in BUILD/npm (.ci/setup installs it), curl, python3 and /usr/bin/time.
set -euo pipefail
script_dir=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$script_dir/.." && pwd)
build_dir=${HEAPD_BUILD_DIR:-$source_dir/build}
reports=10000 hosts=500 new=10 keep=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --build-dir) build_dir=$2; shift 2 ;;
        --reports) reports=$2; shift 2 ;;
        --hosts) hosts=$2; shift 2 ;;
        --new) new=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
heapd=$build_dir/daemon/heapd
s3rver=$build_dir/npm/node_modules/s3rver
[[ -x $heapd ]] || { echo "build heapd first ($build_dir)" >&2; exit 2; }
[[ -f $s3rver/package.json ]] || { echo "no s3rver in $build_dir/npm (run .ci/setup)" >&2; exit 2; }

work=$(mktemp -d /tmp/heapd-fleet-bench.XXXXXX)
s3_pid=
cleanup() {
    [[ -n $s3_pid ]] && kill "$s3_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    if [[ $keep == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

port=$((20000 + RANDOM % 20000))
endpoint=http://127.0.0.1:$port
mkdir -p "$work/s3"
node --openssl-legacy-provider "$source_dir/tests/support/s3_test_server.js" "$s3rver" "$work/s3" heapd-bench "$port" S3RVER \
    >"$work/s3.out" 2>"$work/s3.log" &
s3_pid=$!
for _ in $(seq 150); do grep -q ready "$work/s3.out" 2>/dev/null && break; sleep 0.2; done
grep -q ready "$work/s3.out" || { echo "the S3 server did not start: $(cat "$work/s3.log")" >&2; exit 1; }
echo S3RVER:S3RVER >"$work/credentials"; chmod 600 "$work/credentials"
cat >"$work/heapd.toml" <<CONF
[upload]
endpoint = "$endpoint"
bucket = "heapd-bench"
prefix = "fleet"
credentials_file = "$work/credentials"
CONF

# The reports: files under $1 and a curl config putting each one ($2: first report number, $3: count).
generate() {
    python3 - "$1" "$2" "$3" "$hosts" "$endpoint" <<'PY'
import json, os, random, sys
out, first, count, hosts, endpoint = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
services = [f"com.example.svc{i:02d}.Main" for i in range(20)]
# Three leaks per service, two of them seen; each a suspect class and a path from a GC root.
def leak(s, k):
    return {"signature": f"{s:02x}{k:02x}" + "0" * 12, "class": f"com.example.svc{s:02d}.Cache{k}",
            "held_in": "java.lang.Object[]", "is_class": k == 2,
            "path": f"sticky_class: class com.example.svc{s:02d}.Registry.static CACHE{k} → java.util.HashMap.table → java.util.HashMap$Node[]"}
cfg = open(os.path.join(out, "curl.cfg"), "w")
t0 = 1_790_000_000_000
for n in range(first, first + count):
    rnd = random.Random(n)
    host = f"host-{n % hosts:03d}"
    s = (n % hosts + (n // hosts) % 2) % len(services)
    jvm = n // (2 * hosts)  # the same JVM dumped again later
    time_ms = t0 + n * 60_000
    suspects = []
    for k in range(rnd.randint(0, 2)):
        l = leak(s, k)
        l.update(retained_bytes=(200 + 40 * jvm + rnd.randint(0, 50)) << 20, share=0.3 + rnd.random() / 2)
        suspects.append(l)
    key = f"fleet/{host}/{services[s]}/2026{n:08d}"
    entry = {"fleet_entry": 1, "key": key, "id": f"2026{n:08d}", "host": host, "service": services[s],
             "pid": 1000 + s, "jvm_start_time": 500 + s, "time_ms": time_ms,
             "trigger": "oom" if rnd.random() < 0.2 else "rule", "oom_kind": "", "jvm": "17.0.15+6",
             "reachable_bytes": 900 << 20, "heap_bytes": 1 << 30, "objects": 12_000_000, "suspects": suspects}
    d = os.path.join(out, key)
    os.makedirs(d, exist_ok=True)
    for name, text in (("report.json", "{}\n"), ("report.html", "<!DOCTYPE html>\n"),
                       ("summary.json", json.dumps(entry) + "\n")):
        open(os.path.join(d, name), "w").write(text)
        cfg.write(f'upload-file = "{d}/{name}"\nurl = "{endpoint}/heapd-bench/{key}/{name}"\n')
PY
}
put() {
    curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -o /dev/null -K "$1/curl.cfg"
}
seconds() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }
# run NAME ARGS...: heapd fleet ARGS, its wall time and peak resident memory.
run() {
    local name=$1; shift
    /usr/bin/time -f "%e %M %U %S" -o "$work/time" "$heapd" fleet --config "$work/heapd.toml" \
        --index "$work/index.json" "$@" >"$work/$name.out" 2>"$work/$name.err"
    read -r wall rss user sys <"$work/time"
    printf '   %-40s %6.2f s (heapd CPU %5.2f s)  %6.1f MB peak  %s\n' "$name" "$wall" \
        "$(echo "$user + $sys" | bc -l)" "$(echo "$rss / 1000" | bc -l)" \
        "$(grep -o '[0-9]* read, [0-9]* from the index' "$work/$name.err")"
}

mkdir -p "$work/gen" "$work/gen-new"
echo "== $reports reports from $hosts hosts into s3://heapd-bench/fleet ($endpoint)"
t0=$(seconds)
generate "$work/gen" 0 "$reports"
put "$work/gen"
echo "   generated and put in $(elapsed "$t0" "$(seconds)") s ($((reports * 3)) objects)"

echo "== heapd fleet"
run "first run (every summary read)"
run "again, nothing new (listing only)"
generate "$work/gen-new" "$reports" "$new"
put "$work/gen-new"
run "after $new new reports"
run "the page (--html)" --html "$work/fleet.html"
echo "   page: $(stat -c %s "$work/fleet.html") bytes; index: $(stat -c %s "$work/index.json") bytes"
head -3 "$work/first run (every summary read).out" | sed 's/^/   /'

# Baseline: curl getting 1000 summaries, one connection.
find "$work/gen/fleet" -name summary.json | awk "NR <= 1000" | sed "s|^$work/gen/|url = \"$endpoint/heapd-bench/|; s|\$|\"\noutput = \"/dev/null\"|" \
    >"$work/get.cfg"
t0=$(seconds)
curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -K "$work/get.cfg"
t_curl=$(elapsed "$t0" "$(seconds)")
printf '   %-46s %7.2f s  (%.2f ms a summary)\n' "baseline: curl GET of 1000 summaries" "$t_curl" "$(echo "$t_curl" | bc -l)"
