#!/usr/bin/env bash
# The first minutes of a new user, measured: a fresh Debian 12 root (mmdebstrap, variant important,
# with git), booted with systemd-nspawn --boot so systemd is PID 1 as on a machine, then in it
# `git clone` of this repository's HEAD and `.ci/demo` (or the command given), timed from the clone
# to its end, apt included. Prints the command's output (the demo's own step times) and the whole.
# Root, Debian's archive reachable.
# Usage: bench/run_from_clone.sh [SCRATCH_DIR [COMMAND]]   (default: a new directory under /var/tmp,
#        .ci/demo; COMMAND runs with bash -c in the clone, e.g. '.ci/setup && ctest --test-dir build -L unit')
# Environment: HEAPD_DEMO_ROOT_TAR: a tarball of such a root made before (mmdebstrap ... ROOT.tar), to
# leave the root's own making out of repeated runs.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
for tool in mmdebstrap systemd-nspawn nsenter git; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt install mmdebstrap systemd-container git)" >&2; exit 2; }
done
scratch=${1:-$(mktemp -d /var/tmp/heapd-demo-XXXXXX)}
command=${2:-.ci/demo}
mkdir -p "$scratch"
root=$scratch/root
nspawn_pid=
ct_pid=
cleanup() {
  [ -z "$ct_pid" ] || timeout 30 nsenter -t "$ct_pid" -a systemctl poweroff >/dev/null 2>&1 || true
  if [ -n "$nspawn_pid" ]; then
    for _ in $(seq 60); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$root" "$scratch/tmp"
}
trap cleanup EXIT

if [ -n "${HEAPD_DEMO_ROOT_TAR:-}" ]; then
  echo "== the fresh root from $HEAPD_DEMO_ROOT_TAR"
  mkdir -p "$root" && tar -C "$root" -xf "$HEAPD_DEMO_ROOT_TAR"
else
  echo "== mmdebstrap bookworm (variant important, with git)"
  start=$SECONDS
  mmdebstrap --quiet --variant=important --include=git,ca-certificates,dbus,systemd-sysv \
    bookworm "$root" >"$scratch/mmdebstrap.log" 2>&1 || { tail -20 "$scratch/mmdebstrap.log"; exit 1; }
  echo "   made in $((SECONDS - start)) s"
fi
echo heapd-demo >"$root/etc/hostname"
# The host's own certificate authorities (a network that inspects TLS has one), as a machine on the
# same network would have them; npm needs them. Not part of what is timed.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || true
fi

# The peer dumps some tests read lie in ../shared beside the clone, as beside this checkout.
shared=()
[ ! -d "$src/../shared" ] || shared=(--bind-ro="$(cd "$src/../shared" && pwd)":/srv/shared)
# Debian 12 keeps /tmp on the root file system; systemd-nspawn would mount a tmpfs of a tenth of
# the RAM there, which the tests' dumps and core files fill. A directory of the scratch instead.
mkdir -p "$scratch/tmp" && chmod 1777 "$scratch/tmp"
echo "== booting it: systemd-nspawn --boot (the repository at /src, read-only)"
systemd-nspawn --boot --register=no --keep-unit --quiet -D "$root" --machine=heapd-demo \
  --bind-ro="$src":/src "${shared[@]}" --bind="$scratch/tmp":/tmp >"$scratch/console.log" 2>&1 </dev/null &
nspawn_pid=$!
for _ in $(seq 120); do
  ct_pid=$(ps --ppid "$nspawn_pid" -o pid=,comm= | awk '$2 == "systemd" { print $1 }')
  [ -n "$ct_pid" ] && break
  sleep 0.5
done
[ -n "$ct_pid" ] || { tail -20 "$scratch/console.log"; echo "the root did not boot" >&2; exit 1; }
timeout 120 nsenter -t "$ct_pid" -a systemctl is-system-running --wait >/dev/null 2>&1
echo "   booted: $(nsenter -t "$ct_pid" -a nproc) cores, $(nsenter -t "$ct_pid" -a sh -c 'command -v g++ java cmake' | wc -l) of g++, java, cmake present"

echo "== git clone /src heapd && cd heapd && $command   (in the booted root, as root)"
start=$(date +%s%N)
nsenter -t "$ct_pid" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  bash -c 'cd /srv && git config --global --add safe.directory /src && git clone -q /src heapd && cd heapd && eval "$1"' \
  fresh-root "$command" \
  >"$scratch/demo.log" 2>&1
status=$?
end=$(date +%s%N)
sed 's/^/  | /' "$scratch/demo.log"
elapsed=$(((end - start) / 1000000))
printf '== from git clone to the end of %s: %d.%d s (exit %d)\n' "$command" $((elapsed / 1000)) $((elapsed / 100 % 10)) "$status"
if [ "$command" = .ci/demo ]; then
  grep -q "Leak suspects" "$scratch/demo.log" || { echo "the report was not printed" >&2; exit 1; }
fi
exit "$status"
