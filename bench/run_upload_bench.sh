#!/usr/bin/env bash
# Upload throughput: a JVM's dump (tests/java/RandomGraph.java: linked nodes with random long
# fields, so the dump stays big once stripped), taken and analyzed by a `heapd serve` of the build
# on a temporary socket and store, then `heapd upload --once` with [upload] dump = true to an S3
# server on the loopback (tests/support/s3_test_server.js: s3rver behind a SigV4 check). Printed:
# the dump's size, the stripped and compressed object's size, the time of the whole upload (strip,
# gzip, report.json, report.html, the dump in 16 MiB parts) and its throughput in dump bytes, and
# as baselines in the same run: `cat DUMP >/dev/null`, `heapd strip DUMP` + `gzip -6` (what the
# uploader does before sending), and `curl --aws-sigv4 -T` of the same object to the same server.
#
#   bench/run_upload_bench.sh [--build-dir DIR] [NODES]   (default 18000000 nodes: a dump of about 1 GB)
#
# Needs root, java and javac, node and s3rver in BUILD/npm (.ci/setup installs it), curl, and free
# space in /tmp for about three times the dump.
set -euo pipefail
script_dir=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$script_dir/.." && pwd)
build_dir=${HEAPD_BUILD_DIR:-$source_dir/build}
nodes=18000000
while [[ $# -gt 0 ]]; do
    case $1 in
        --build-dir) build_dir=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) nodes=$1; shift ;;
    esac
done
heapd=$build_dir/daemon/heapd
heapctl=$build_dir/cli/heapctl
s3rver=$build_dir/npm/node_modules/s3rver
[[ -x $heapd && -x $heapctl ]] || { echo "build heapd and heapctl first ($build_dir)" >&2; exit 2; }
[[ -f $s3rver/package.json ]] || { echo "no s3rver in $build_dir/npm (run .ci/setup)" >&2; exit 2; }

work=$(mktemp -d /tmp/heapd-upload-bench.XXXXXX)
chmod 755 "$work"
daemon_pid= jvm_pid= s3_pid=
cleanup() {
    for p in $jvm_pid $daemon_pid $s3_pid; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
seconds() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }
mb() { echo "scale=1; $1 / 1000000" | bc; }

javac -d "$work/classes" "$source_dir/tests/java/RandomGraph.java"
"$heapd" serve --foreground --config '' --socket "$work/heapd.sock" --store "$work/store" \
    --spool '' 2>"$work/heapd.log" &
daemon_pid=$!
java -Xmx4g -Xshare:off -cp "$work/classes" RandomGraph "$nodes" >"$work/jvm.out" &
jvm_pid=$!
for _ in $(seq 600); do grep -q ready "$work/jvm.out" 2>/dev/null && break; sleep 0.2; done
echo "== heapctl dump $jvm_pid --wait (RandomGraph, $nodes nodes)"
t0=$(seconds)
"$heapctl" --socket "$work/heapd.sock" dump "$jvm_pid" --wait >/dev/null
echo "   dumped and analyzed in $(elapsed "$t0" "$(seconds)") s"
kill "$jvm_pid"; jvm_pid=
id=$(ls "$work/store/entries" | grep -v '^\.' | head -1)
dump=$work/store/entries/$id/dump.hprof
dump_bytes=$(stat -c %s "$dump")

port=$((20000 + RANDOM % 20000))
mkdir -p "$work/s3"
node --openssl-legacy-provider "$source_dir/tests/support/s3_test_server.js" "$s3rver" "$work/s3" heapd-bench "$port" S3RVER \
    >"$work/s3.out" 2>"$work/s3.log" &
s3_pid=$!
for _ in $(seq 150); do grep -q ready "$work/s3.out" 2>/dev/null && break; sleep 0.2; done
echo S3RVER:S3RVER >"$work/credentials"; chmod 600 "$work/credentials"
cat >"$work/heapd.toml" <<CONF
[daemon]
store = "$work/store"
[upload]
endpoint = "http://127.0.0.1:$port"
bucket = "heapd-bench"
prefix = "bench"
credentials_file = "$work/credentials"
state = "$work/state"
dump = true
CONF

sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
t0=$(seconds); cat "$dump" >/dev/null; t_cat=$(elapsed "$t0" "$(seconds)")
t0=$(seconds)
"$heapd" upload --config "$work/heapd.toml" --once 2>"$work/upload.log"
t_upload=$(elapsed "$t0" "$(seconds)")
object=$(find "$work/s3/heapd-bench" -name 'dump.hprof.gz._S3rver_object')
object_bytes=$(stat -c %s "$object")
t0=$(seconds)
"$heapd" strip "$dump" "$work/stripped.hprof" >/dev/null 2>&1 && gzip -6 "$work/stripped.hprof"
t_strip=$(elapsed "$t0" "$(seconds)")
rm -f "$work/stripped.hprof.gz"
t0=$(seconds)
curl -sS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user S3RVER:S3RVER \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -T "$object" "http://127.0.0.1:$port/heapd-bench/baseline.gz"
t_curl=$(elapsed "$t0" "$(seconds)")

echo "== dump $(mb "$dump_bytes") MB; stripped and compressed $(mb "$object_bytes") MB"
printf '   %-44s %7.2f s  %7.1f MB/s of dump\n' "cat DUMP >/dev/null" "$t_cat" "$(echo "$dump_bytes / $t_cat / 1000000" | bc -l)"
printf '   %-44s %7.2f s  %7.1f MB/s of dump\n' "heapd strip + gzip -6 (baseline)" "$t_strip" "$(echo "$dump_bytes / $t_strip / 1000000" | bc -l)"
printf '   %-44s %7.2f s  %7.1f MB/s of object\n' "curl --aws-sigv4 -T OBJECT (baseline)" "$t_curl" "$(echo "$object_bytes / $t_curl / 1000000" | bc -l)"
printf '   %-44s %7.2f s  %7.1f MB/s of dump\n' "heapd upload --once (strip, gzip, send all)" "$t_upload" "$(echo "$dump_bytes / $t_upload / 1000000" | bc -l)"
grep -E "uploaded to" "$work/upload.log" | sed 's/^/   /'
