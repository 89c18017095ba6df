#!/usr/bin/env bash
# Fails when heapd's own code (base/, attach/, daemon/, formats/) opens a file in a way that could
# make the daemon a terminal's process: an open(2)/openat(2) of an existing name for reading or
# writing without O_NOCTTY. heapd runs as a session leader without a terminal under systemd; the
# first terminal such a process opens without O_NOCTTY becomes its controlling terminal, and whoever
# holds that terminal's other side can then stop it (^C, ^Z) or hang it up. Opens that cannot reach
# a terminal are left alone: O_PATH, O_DIRECTORY, O_TMPFILE, and O_CREAT|O_EXCL (a new file).
# streams (fopen, ifstream) may only open /proc files, never a name someone else controls.
# Usage: open_flags_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'base/*.cpp' 'attach/*.cpp' 'daemon/*.cpp' 'formats/*.cpp')
else
  mapfile -t files < <(find base attach daemon formats -name '*.cpp')
fi
[ ${#files[@]} -gt 0 ] || { echo "no sources found under $1" >&2; exit 1; }
perl -0777 -ne '
  my $file = $ARGV;
  # Each open/openat call up to the end of its statement.
  while (/((?:::open|::openat|posix_spawn_file_actions_addopen)\s*(\((?:[^()]++|(?-1))*\)))/gs) {
    my $call = $1;
    my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
    (my $flat = $call) =~ s/\s+/ /g;
    next if $flat =~ /O_NOCTTY|O_PATH|O_DIRECTORY|O_TMPFILE/;
    next if $flat =~ /O_CREAT/ && $flat =~ /O_EXCL/;
    next unless $flat =~ /O_RDONLY|O_WRONLY|O_RDWR/;
    print "$file:$line: opened without O_NOCTTY: $flat\n";
    $bad++;
  }
  while (/((?:std::fopen|std::ifstream\s+\w+)\s*(\((?:[^()]++|(?-1))*\)))/gs) {
    my $call = $1;
    my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
    (my $flat = $call) =~ s/\s+/ /g;
    next if $flat =~ m{"/proc/|proc_path\(|"/proc/self};
    print "$file:$line: a stream opened on a name that is not in /proc: $flat\n";
    $bad++;
  }
  END { if ($bad) { print "$bad open(s) could give heapd a controlling terminal\n"; exit 1 } }
' "${files[@]}"
echo "${#files[@]} files: every open of an existing name is O_NOCTTY"
