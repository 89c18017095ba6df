#!/usr/bin/env bash
# The Debian package under a real systemd: builds the package (.ci/package), makes a fresh Debian 12
# root with mmdebstrap (systemd, dbus, a JRE, the package's dependencies), boots it with
# systemd-nspawn --boot, installs the package there and checks, from the host with nsenter, what a
# fleet relies on: the socket enabled on install, the service started by its first connection,
# READY and the watchdog (a stopped daemon is restarted), the journal's priorities, a JVM that runs
# out of memory dumped and reported, JVMs with attach disabled (on the host, and in a container of
# their own at their OutOfMemoryError) dumped through the snapshot fallback (gdb, jhsdb) under the
# unit's hardening, reload, the hardening, upgrade keeping store and config, stop, remove and purge. Prints the lines a reader wants to see (marked "|"), then PASS/FAIL per check.
# Usage: booted_package_test.sh SOURCE_DIR SCRATCH_DIR   (exit 77: skipped, the reason printed)
set -uo pipefail
src=$(cd "$1" && pwd)
scratch_base=$2

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the booted-container test needs root"
for tool in mmdebstrap systemd-nspawn nsenter javac dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt install mmdebstrap systemd-container openjdk-17-jdk-headless)"
done

failures=()
check() {  # check NAME COMMAND...: runs it, records PASS or FAIL
  local name=$1
  shift
  if "$@" >/dev/null; then echo "PASS $name"; else echo "FAIL $name"; failures+=("$name"); fi
}
wait_for() {  # wait_for SECONDS COMMAND...: until it succeeds
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt "$end" ] || return 1
    sleep 0.5
  done
}
show() { sed 's/^/  | /'; }
says_nothing_failed() { ! grep -qiE 'could not|fail|warning' <<<"$1"; }

echo "== building the package (.ci/package)"
"$src/.ci/package" | show || { echo "FAIL the package does not build"; exit 1; }
version=$(cd "$src" && dpkg-parsechangelog -S Version)
deb=$src/build/package/heapd_${version}_amd64.deb
[ -f "$deb" ] || { echo "FAIL no package at $deb"; exit 1; }

mkdir -p "$scratch_base"
work=$(mktemp -d "$scratch_base/booted-XXXXXX")
root=$work/root
nspawn_pid=
ct_pid=
cleanup() {
  if [ -n "$ct_pid" ]; then
    timeout 30 nsenter -t "$ct_pid" -a systemctl poweroff >/dev/null 2>&1 || true
  fi
  if [ -n "$nspawn_pid" ]; then
    for _ in $(seq 60); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.5; done
    [ -z "$ct_pid" ] || kill -KILL "$ct_pid" 2>/dev/null || true
    kill -KILL "$nspawn_pid" 2>/dev/null || true
    wait "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The package's dependencies go into the root, so dpkg -i installs it in the booted container.
deps=$(dpkg-deb -f "$deb" Depends | sed -E 's/\([^)]*\)//g; s/\|[^,]*//g; s/ //g')
# A JDK (jhsdb) and gdb, which the package suggests: the snapshot fallback needs both.
echo "== mmdebstrap bookworm (systemd, dbus, openjdk-17-jdk-headless, gdb, $deps)"
start=$SECONDS
mmdebstrap --quiet --variant=minbase \
  --include="systemd,systemd-sysv,dbus,openjdk-17-jdk-headless,gdb,procps,util-linux,$deps" \
  bookworm "$root" >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log"; skip "mmdebstrap could not make a Debian 12 root (is Debian's archive reachable?)"; }
echo "  | root made in $((SECONDS - start)) s"
echo heapd-test >"$root/etc/hostname"
cp "$deb" "$root/root/heapd.deb"
# The same package as a newer version, for the upgrade.
dpkg-deb -R "$deb" "$work/upgrade"
sed -i "s/^Version: .*/Version: ${version}+upgrade1/" "$work/upgrade/DEBIAN/control"
dpkg-deb -b "$work/upgrade" "$root/root/heapd-upgrade.deb" >/dev/null
mkdir -p "$root/opt/heapd-test"
javac -d "$root/opt/heapd-test" "$src/tests/java/OomExit.java" "$src/tests/java/Leaky.java"

echo "== booting it: systemd-nspawn --boot --register=no --keep-unit"
systemd-nspawn --boot --register=no --keep-unit --quiet -D "$root" --machine=heapd-test \
  >"$work/console.log" 2>&1 </dev/null &
nspawn_pid=$!
find_init() { ct_pid=$(ps --ppid "$nspawn_pid" -o pid=,comm= | awk '$2 == "systemd" { print $1 }'); [ -n "$ct_pid" ]; }
if ! wait_for 60 find_init; then
  tail -20 "$work/console.log"
  skip "systemd-nspawn could not boot the container here"
fi
ct() { nsenter -t "$ct_pid" -a "$@"; }
state=$(timeout 120 nsenter -t "$ct_pid" -a systemctl is-system-running --wait 2>&1)
echo "  | booted: systemd $(ct systemctl --version | head -1 | cut -d' ' -f2) is PID 1, system $state"

echo "== dpkg -i heapd.deb"
ct dpkg -i /root/heapd.deb 2>&1 | show
check "the package installs" ct dpkg -s heapd
check "the group heapd exists (sysusers)" ct getent group heapd
check "the store is 0750 root:heapd (tmpfiles)" test "$(ct stat -c '%a %U:%G' /var/lib/heapd)" = "750 root:heapd"
check "the alert rules ship, as promtool reads them" /usr/bin/promtool check rules "$root/usr/share/heapd/prometheus/heapd-alerts.yml"
check "the Grafana dashboard ships" ct test -s /usr/share/heapd/grafana/heapd-dashboard.json
check "heapd.socket is enabled" test "$(ct systemctl is-enabled heapd.socket)" = enabled
check "heapd.socket is active" test "$(ct systemctl is-active heapd.socket)" = active
check "heapd.service waits for its socket" test "$(ct systemctl is-active heapd.service)" = inactive

echo "== heapctl status (the first connection starts heapd.service)"
ct heapctl status 2>&1 | show
check "socket activation started heapd.service" test "$(ct systemctl is-active heapd.service)" = active
status=$(ct systemctl show heapd.service -p StatusText --value)
echo "  | StatusText=$status"
check "READY=1 and a status sent (Type=notify)" grep -q "serving on /run/heapd/heapd.sock" <<<"$status"

echo "== hardening"
main=$(ct systemctl show heapd.service -p MainPID --value)
ct grep -E '^(CapBnd|CapEff|NoNewPrivs|Seccomp):' "/proc/$main/status" | show
# CAP_DAC_READ_SEARCH 2, CAP_KILL 5, CAP_SETGID 6, CAP_SETUID 7, CAP_SYS_CHROOT 18, CAP_SYS_PTRACE 19,
# CAP_SYS_ADMIN 21: the unit's CapabilityBoundingSet=.
check "capabilities bounded to the unit's seven" ct grep -q '^CapBnd:[[:space:]]*00000000002c00e4$' "/proc/$main/status"
check "no new privileges" ct grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$main/status"
check "a system call filter" ct grep -q '^Seccomp:[[:space:]]*2$' "/proc/$main/status"
denied=$(ct nsenter -t "$main" -m touch /usr/heapd-probe 2>&1)
echo "  | as heapd sees the files: touch /usr/heapd-probe: $denied"
check "a write outside ReadWritePaths= fails (ProtectSystem=strict)" grep -q "Read-only file system" <<<"$denied"
check "a write in the store works" ct nsenter -t "$main" -m sh -c 'echo x >/var/lib/heapd/.probe && rm /var/lib/heapd/.probe'
check "heapd has a network namespace of its own (PrivateNetwork=)" \
  test "$(ct readlink "/proc/$main/ns/net")" != "$(ct readlink /proc/1/ns/net)"
ct systemd-analyze security heapd.service --no-pager 2>&1 | tail -1 | show

echo "== a JVM with -XX:OnOutOfMemoryError='heapd dump %p' runs out of memory"
ct useradd --create-home app
ct env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/app runuser -u app -- java -Xmx64m \
  "-XX:OnOutOfMemoryError=heapd dump %p" -cp /opt/heapd-test OomExit /home/app/go >"$work/jvm.out" 2>&1 &
jvm_of_app() { jpid=$(ct pgrep -u app -f OomExit); [ -n "$jpid" ]; }
wait_for 30 jvm_of_app
armed() { ct heapctl jvms | grep -qE "^ *$jpid .*oom-armed"; }
check "heapd arms the JVM" wait_for 60 armed
ct heapctl jvms | show
ct runuser -u app -- touch /home/app/go
check "the JVM's dump is reported" wait_for 120 ct heapctl report "$jpid"
report=$(ct heapctl report "$jpid" --top 3 2>&1)
show <<<"$report" | head -40
check "the report names the leaking map" grep -q "java.util.HashMap" <<<"$report"
show <"$work/jvm.out" | head -5
dump_id=$(sed -n 's/^heapctl report: dump \([^ ]*\) .*/\1/p' <<<"$report")
echo "  | dump id $dump_id"

echo "== the report's journal event: journalctl MESSAGE_ID=838bc2aa119b48cfa35c7c425bf5fb0b -o json"
event() { ct journalctl MESSAGE_ID=838bc2aa119b48cfa35c7c425bf5fb0b -o json --no-pager | grep "\"HEAPD_DUMP_ID\":\"$dump_id\""; }
wait_for 10 event
entry=$(event)
{ grep -o '"MESSAGE":"[^"]*"' <<<"$entry"; grep -oE '"(PRIORITY|HEAPD_[A-Z_]*)":"[^"]*"' <<<"$entry" | sort; } | show
for field in "HEAPD_PID\":\"$jpid" 'HEAPD_MAIN_CLASS":"OomExit' 'HEAPD_TRIGGER":"oom' 'PRIORITY":"4' \
             'HEAPD_SUSPECT_CLASS":"java.util.HashMap' 'HEAPD_SUSPECT_PERCENT":"9'; do
  check "the journal event has \"$field\"" grep -qF "\"$field" <<<"$entry"
done

echo "== the snapshot fallback under the unit: a host JVM with -XX:+DisableAttachMechanism, heapctl dump"
# Its attach listener never starts: gdb writes a core of it and its JDK's jhsdb converts the core,
# in a pid namespace and /proc of its own (heapd's mounts are private, so every JVM is reached so).
ct env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/app runuser -u app -- java -Xmx64m \
  -XX:+DisableAttachMechanism -cp /opt/heapd-test Leaky /home/app/grow 100000 >"$work/leaky.out" 2>&1 &
leaky_up() { lpid=$(ct pgrep -u app -f Leaky) && grep -q ready "$work/leaky.out"; }
wait_for 30 leaky_up
ct runuser -u app -- touch /home/app/grow
wait_for 30 grep -q grown "$work/leaky.out"
listing=$(ct heapctl jvms 2>&1)
show <<<"$listing"
check "a JVM of the host is listed on the host (heapd's private mounts are no container)" \
  grep -qE "^ *$lpid +app +host " <<<"$listing"
dumped=$(ct heapctl dump "$lpid" --wait 2>&1)
show <<<"$dumped" | grep -E "heapctl|suspect|Leaky|Kept" | head -8
check "the JVM with attach disabled is dumped through the snapshot" grep -q "^Kept as dump" <<<"$dumped"
check "its report names the leak" grep -q "100,000 Leaky" <<<"$dumped"
leaky_id=$(sed -n 's/^Kept as dump \([^ ]*\) .*/\1/p' <<<"$dumped")
check "the dump says how it was taken" sh -c "nsenter -t $ct_pid -a heapctl dumps | grep -A1 '^$leaky_id ' | grep -q 'core by gdb, HPROF by jhsdb'"
ct kill "$lpid"

echo "== a JVM in a container of its own (mount and pid namespaces, a private /tmp), attach disabled, runs out of memory"
ct env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/app unshare --mount --pid --fork --mount-proc sh -c \
  'mount -t tmpfs -o mode=1777 tmpfs /tmp && exec runuser -u app -- java -Xmx64m -XX:+DisableAttachMechanism \
   "-XX:OnOutOfMemoryError=heapd dump %p" -cp /opt/heapd-test OomExit /home/app/go2' >"$work/contained.out" 2>&1 &
contained_up() { cpid=$(ct pgrep -u app -f 'OomExit /home/app/go2') && grep -q ready "$work/contained.out"; }
wait_for 30 contained_up
listing=$(ct heapctl jvms 2>&1)
show <<<"$listing" | grep -E "PID|^ *$cpid "
check "the JVM in a container is listed in a container" grep -qE "^ *$cpid +app +container " <<<"$listing"
ct runuser -u app -- touch /home/app/go2
contained_report() { report=$(ct heapctl report "$cpid" --top 3 2>&1) && grep -q "java.util.HashMap" <<<"$report"; }
check "its OOM is dumped through the snapshot (its own JDK, in its namespaces) and reported" wait_for 120 contained_report
show <<<"$report" | head -12
contained_id=$(sed -n 's/^heapctl report: dump \([^ ]*\) .*/\1/p' <<<"$report")
ct heapctl dumps 2>&1 | grep -A2 "^$contained_id " | show
check "the dump says how it was taken" sh -c "nsenter -t $ct_pid -a heapctl dumps | grep -A1 '^$contained_id ' | grep -q 'core by gdb, HPROF by jhsdb'"
show <"$work/contained.out" | head -5
check "no gdb or jhsdb is left running" sh -c "! nsenter -t $ct_pid -a pgrep -f 'bin/jhsdb|bin/gdb '"
check "heapd's own jhsdb is no JVM it watches (no death record of it)" \
  sh -c "! nsenter -t $ct_pid -a journalctl -u heapd.service --no-pager | grep -q SALauncher"

echo "== heapd-upload.service: the report to an S3 server (s3rver on the host's loopback)"
s3rver=$src/build/npm/node_modules/s3rver
if [ -f "$s3rver/package.json" ] && command -v node >/dev/null; then
  s3port=$((20000 + RANDOM % 20000))
  mkdir -p "$work/s3"
  node --openssl-legacy-provider "$src/tests/support/s3_test_server.js" "$s3rver" "$work/s3" heapd-test "$s3port" S3RVER \
    >"$work/s3.out" 2>"$work/s3.log" &
  s3_pid=$!
  wait_for 30 grep -q ready "$work/s3.out"
  # The shipped config has an [upload] table, every key commented out: the keys go under it.
  ct sed -i "/^\[upload\]\$/a endpoint = \"http://127.0.0.1:$s3port\"\nbucket = \"heapd-test\"\nprefix = \"fleet\"" \
    /etc/heapd/heapd.toml
  ct sh -c 'umask 077 && echo S3RVER:S3RVER >/etc/heapd/s3-credentials'
  ct systemctl enable --now heapd-upload.service 2>&1 | show
  uploaded() { [ -f "$work/s3/heapd-test/fleet/heapd-test/OomExit/$dump_id/summary.json._S3rver_object" ]; }
  check "heapd-upload puts the report, its page and its summary in the bucket" wait_for 60 uploaded
  check "heapd fleet reads it back from the bucket" ct sh -c "heapd fleet --no-index --json | grep -q '/OomExit/$dump_id\"'"
  (cd "$work/s3/heapd-test" && find . -name '*._S3rver_object' | sed 's/._S3rver_object$//' | sort) | show
  ct journalctl -u heapd-upload.service --no-pager | tail -3 | show
  upid=$(ct systemctl show heapd-upload.service -p MainPID --value)
  ct grep -E '^(Uid|Groups|CapEff):' "/proc/$upid/status" | show
  check "the uploader runs" test "${upid:-0}" != 0
  check "the uploader runs with no capability" ct grep -q '^CapEff:[[:space:]]*0000000000000000$' "/proc/$upid/status"
  check "the uploader is not root" ct grep -qE '^Uid:[[:space:]]+[1-9][0-9]*[[:space:]]' "/proc/$upid/status"
  ct systemd-analyze security heapd-upload.service --no-pager 2>&1 | tail -1 | show
  ct systemctl disable --now heapd-upload.service >/dev/null 2>&1
  ct sed -i -e '/^endpoint = "http:\/\/127.0.0.1:/d' -e '/^bucket = "heapd-test"$/d' -e '/^prefix = "fleet"$/d' \
    /etc/heapd/heapd.toml
  ct rm -f /etc/heapd/s3-credentials
  kill "$s3_pid" 2>/dev/null
else
  echo "FAIL s3rver is not installed in $src/build/npm (.ci/setup installs it)"
  failures+=("s3rver missing")
fi

echo "== systemctl reload heapd"
ct sed -i 's/^#keep_count = 50$/keep_count = 7/' /etc/heapd/heapd.toml
ct systemctl reload heapd.service
reloaded() { ct journalctl -u heapd.service --no-pager | grep -q "configuration reloaded.*keep_count"; }
check "reload rereads the config" wait_for 10 reloaded
ct journalctl -u heapd.service --no-pager | grep "configuration reloaded" | show
ct sh -c 'echo "this is not toml [" >>/etc/heapd/heapd.toml'
ct systemctl reload heapd.service
refused() { ct journalctl -u heapd.service --no-pager | grep -q "configuration not reloaded"; }
check "a broken config is refused, the running one kept" wait_for 10 refused
ct sed -i '$d' /etc/heapd/heapd.toml

echo "== watchdog: kill -STOP heapd, systemd restarts it"
ct kill -STOP "$main"
restarted() { [ "$(ct systemctl show heapd.service -p NRestarts --value)" = 1 ] && [ "$(ct systemctl is-active heapd.service)" = active ]; }
start=$SECONDS
check "the watchdog restarts a stopped daemon" wait_for 90 restarted
echo "  | restarted after $((SECONDS - start)) s"
ct journalctl -u heapd.service --no-pager | grep -E "watchdog|Watchdog|fatal signal|Scheduled restart" | show
check "heapd serves again" ct heapctl status

echo "== journalctl -u heapd: priorities"
journal=$(ct journalctl -u heapd.service -o json --no-pager | grep '"SYSLOG_IDENTIFIER":"heapd"')
for p in 2 4 6; do echo "  | PRIORITY=$p: $(grep -c "\"PRIORITY\":\"$p\"" <<<"$journal") lines of heapd"; done
check "info lines at priority 6" grep -q '"PRIORITY":"6"' <<<"$journal"
check "the refused reload at priority 4 (warning)" grep -q '"PRIORITY":"4".*configuration not reloaded\|configuration not reloaded.*"PRIORITY":"4"' <<<"$journal"
check "the crash report at priority 2 (critical)" grep -q '"PRIORITY":"2"' <<<"$journal"

echo "== upgrade to ${version}+upgrade1"
main=$(ct systemctl show heapd.service -p MainPID --value)
socket_since=$(ct systemctl show heapd.socket -p ActiveEnterTimestampMonotonic --value)
upgrade=$(ct dpkg -i /root/heapd-upgrade.deb 2>&1)
show <<<"$upgrade"
check "the upgrade installs" test "$(ct dpkg-query -W -f '${Version}' heapd)" = "${version}+upgrade1"
check "the upgrade says nothing failed" says_nothing_failed "$upgrade"
check "the running service is restarted" test "$(ct systemctl show heapd.service -p MainPID --value)" != "$main"
check "the service runs after the upgrade" test "$(ct systemctl is-active heapd.service)" = active
check "the socket is left alone by the upgrade" \
  test "$(ct systemctl show heapd.socket -p ActiveEnterTimestampMonotonic --value)" = "$socket_since"
check "the config keeps its change" ct grep -q '^keep_count = 7$' /etc/heapd/heapd.toml
check "the store keeps the dump" sh -c "[ -n '$dump_id' ] && nsenter -t $ct_pid -a heapctl dumps | grep -q '$dump_id'"

echo "== systemctl stop heapd.service heapd.socket"
ct systemctl stop heapd.service heapd.socket
check "nothing of heapd runs" sh -c "! nsenter -t $ct_pid -a pgrep -f 'heapd '"
check "the socket is gone" ct test ! -e /run/heapd/heapd.sock

echo "== dpkg -r heapd (after starting it again)"
ct systemctl start heapd.socket
ct heapctl status >/dev/null
removal=$(ct dpkg -r heapd 2>&1)
show <<<"$removal"
check "the removal says nothing failed" says_nothing_failed "$removal"
check "removing stops the service" test "$(ct systemctl is-active heapd.service)" = inactive
check "removing stops the socket" test "$(ct systemctl is-active heapd.socket)" = inactive
check "no heapd process is left" sh -c "! nsenter -t $ct_pid -a pgrep -f 'heapd '"
check "the store stays after remove" ct sh -c '[ -n "$(ls -A /var/lib/heapd)" ]'
check "the config stays after remove" ct test -f /etc/heapd/heapd.toml

echo "== dpkg -P heapd"
purge=$(ct dpkg -P heapd 2>&1)
show <<<"$purge"
check "purge says it removes the store" grep -q "heapd: purging removes its store /var/lib/heapd (" <<<"$purge"
check "purge removes the store" ct test ! -e /var/lib/heapd
check "purge removes the config" ct test ! -e /etc/heapd

if [ ${#failures[@]} -gt 0 ]; then
  echo "${#failures[@]} check(s) failed: ${failures[*]}"
  echo "-- heapd's journal:"
  ct journalctl -u heapd.service --no-pager | tail -40
  exit 1
fi
echo "all checks passed"
