#!/usr/bin/env bash
# The bash completion of dist/bash-completion/ against the programs: each script is sourced in a
# new bash and its completion function (as `complete -p` names it) driven with COMP_WORDS,
# COMP_CWORD, COMP_LINE and COMP_POINT. heapd's subcommands and heapctl's commands must be exactly
# those their --help lists, each subcommand's options exactly those of `heapd SUB --help`, the
# options heapctl completes exactly the --options of `heapctl --help`; the values of --by, --order
# and --protocol, file names for FILE arguments and the pids of Java processes for PID arguments
# are offered. Prints what differs; exits 1 if anything does.
# Usage: bash_completion_check.sh HEAPD HEAPCTL SRC_DIR
set -euo pipefail
if (($# != 3)); then
    echo "usage: $0 HEAPD HEAPCTL SRC_DIR" >&2
    exit 2
fi
heapd=$1 heapctl=$2 src=$3
heapd_script=$src/dist/bash-completion/heapd
heapctl_script=$src/dist/bash-completion/heapctl
work=$(mktemp -d)
java_pid=""
cleanup() {
    if [[ -n $java_pid ]]; then
        kill "$java_pid" 2>/dev/null || true
        wait "$java_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
failures=0 checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# complete_at SCRIPT LINE: what SCRIPT's completion offers at the end of LINE, one a line, sorted;
# run in $work, with _HEAPD_PROC passed on when set. Words split at spaces, and at "=" after an
# option as bash does (COMP_WORDBREAKS).
complete_at() {
    (cd "$work" && bash --norc --noprofile -c '
        source "$1" || exit 1
        line=$2
        read -ra split <<<"$line"
        [[ $line == *" " ]] && split+=("")
        words=()
        for w in "${split[@]}"; do
            if [[ $w == -*=* ]]; then
                words+=("${w%%=*}" "=")
                [[ -n ${w#*=} ]] && words+=("${w#*=}")
            else
                words+=("$w")
            fi
        done
        COMP_WORDS=("${words[@]}") COMP_CWORD=$((${#words[@]} - 1)) COMP_LINE=$line COMP_POINT=${#line}
        function=$(complete -p "${words[0]}" | sed -nE "s/.* -F ([^ ]+) .*/\1/p")
        [[ -n $function ]] || { echo "no complete -F for ${words[0]}" >&2; exit 1; }
        COMPREPLY=()
        "$function" "${words[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}"
    ' _ "$1" "$2") | sed '/^$/d' | sort -u || true  # a script that fails offers nothing
}
# expect_equal WHAT EXPECTED ACTUAL: the two word lists are the same set.
expect_equal() {
    checks=$((checks + 1))
    local expected actual
    expected=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u)
    actual=$(tr ' ' '\n' <<<"$3" | sed '/^$/d' | sort -u)
    [[ $expected == "$actual" ]] && return 0
    fail "$1: expected [$(echo $expected)], completed [$(echo $actual)]; missing [$(comm -23 <(echo "$expected") <(echo "$actual") | xargs)], extra [$(comm -13 <(echo "$expected") <(echo "$actual") | xargs)]"
}
# expect_offered WHAT WORD ACTUAL: WORD is among the words completed.
expect_offered() {
    checks=$((checks + 1))
    grep -qxF -- "$2" <<<"$3" || fail "$1: $2 not offered (completed [$(echo $3)])"
}

# The lines of a --help's section (after "NAME:", up to the first empty line).
help_section() { awk -v name="$1:" '$0 == name {f = 1; next} f && /^$/ {exit} f'; }

# heapd: the subcommands, each one's long options, and the values of options with a fixed set.
subcommands=$("$heapd" --help | help_section Subcommands | awk '{print $1}')
[[ -n $subcommands ]] || fail "no subcommands in heapd --help"
expect_equal "heapd <TAB>: the subcommands of heapd --help" "$subcommands" "$(complete_at "$heapd_script" "heapd ")"
for sub in $subcommands; do
    help=$("$heapd" "$sub" --help)
    options=$(help_section Options <<<"$help" | grep -oE '^  (-[[:alnum:]],)?--[[:alnum:]-]+' | sed 's/.*,//; s/^ *//')
    expect_equal "heapd $sub --<TAB>: the options of heapd $sub --help" "$options" \
        "$(complete_at "$heapd_script" "heapd $sub --")"
    # "--by TEXT:{site,method,class}=site": the values in braces.
    while read -r option values; do
        [[ -n $option ]] || continue
        expect_equal "heapd $sub 1 $option <TAB>" "${values//,/ }" "$(complete_at "$heapd_script" "heapd $sub 1 $option ")"
    done < <(help_section Options <<<"$help" | sed -nE 's/^  (--[[:alnum:]-]+) [A-Z]+:\{([^}]*)\}.*/\1 \2/p')
done
analyze_no=$("$heapd" analyze --help | grep -oE '^  --no-[[:alnum:]-]+')
expect_equal "heapd analyze --no-<TAB>" "$analyze_no" "$(complete_at "$heapd_script" "heapd analyze --no-")"
expect_equal "heapd sites 1 --by <TAB>" "site method class" "$(complete_at "$heapd_script" "heapd sites 1 --by ")"
expect_equal "heapd sites 1 --order=<TAB>" "live allocated" "$(complete_at "$heapd_script" "heapd sites 1 --order=")"
expect_equal "heapd attach 1 --protocol <TAB>" "auto 1 2" "$(complete_at "$heapd_script" "heapd attach 1 --protocol ")"

# heapctl: the commands, and every --option of its help completed after some command.
heapctl_help=$("$heapctl" --help)
commands=$(help_section Commands <<<"$heapctl_help" | awk '/^  [[:alpha:]]/ {print $1}' | sort -u)
[[ -n $commands ]] || fail "no commands in heapctl --help"
expect_equal "heapctl <TAB>: the commands of heapctl --help" "$commands" "$(complete_at "$heapctl_script" "heapctl ")"
completed=$(complete_at "$heapctl_script" "heapctl --")
for command in $commands; do
    completed+=$'\n'$(complete_at "$heapctl_script" "heapctl $command --")
done
expect_equal "heapctl [COMMAND] --<TAB>, all commands: the --options of heapctl --help" \
    "$(grep -oE -- '--[[:alnum:]][[:alnum:]-]*' <<<"$heapctl_help")" "$completed"
expect_equal "heapctl sites 1 --by <TAB>" "site method class" "$(complete_at "$heapctl_script" "heapctl sites 1 --by ")"
expect_equal "heapctl sites 1 --order <TAB>" "live allocated" "$(complete_at "$heapctl_script" "heapctl sites 1 --order ")"

# FILE arguments: a file made here, a directory for directory options.
touch "$work/heap-dump.hprof"
mkdir "$work/heap-spill"
for line in "heapd analyze hea" "heapd analyze --html hea" "heapd analyze --top 5 hea" "heapd strip in.hprof hea" \
    "heapd diff a.hprof hea" "heapd path hea" "heapd check-config hea" "heapd attach 1 dumpheap hea" \
    "heapd sites 1 --save hea" "heapd serve --config=hea"; do
    expect_offered "$line<TAB>" heap-dump.hprof "$(complete_at "$heapd_script" "$line")"
done
for line in "heapctl report hea" "heapctl histo hea" "heapctl report --html hea" "heapctl --socket hea"; do
    expect_offered "$line<TAB>" heap-dump.hprof "$(complete_at "$heapctl_script" "$line")"
done
expect_equal "heapd analyze --spill-dir hea<TAB>: directories only" heap-spill \
    "$(complete_at "$heapd_script" "heapd analyze --spill-dir hea")"

# PID arguments: the Java processes of a /proc-like directory (two of three are java)...
mkdir -p "$work/proc/101" "$work/proc/202" "$work/proc/303"
echo java >"$work/proc/101/comm"
echo bash >"$work/proc/202/comm"
echo java >"$work/proc/303/comm"
export _HEAPD_PROC=$work/proc
for line in "heapd stack " "heapd sites " "heapd cpu " "heapd dump " "heapd attach "; do
    expect_equal "$line<TAB> (a made /proc)" "101 303" "$(complete_at "$heapd_script" "$line")"
done
expect_equal "heapd stack 3<TAB> (a made /proc)" "303" "$(complete_at "$heapd_script" "heapd stack 3")"
for line in "heapctl dump " "heapctl sites " "heapctl cpu " "heapctl diff " "heapctl path "; do
    expect_equal "$line<TAB> (a made /proc)" "101 303" "$(complete_at "$heapctl_script" "$line")"
done
expect_offered "heapctl report <TAB> (a made /proc)" 303 "$(complete_at "$heapctl_script" "heapctl report ")"
unset _HEAPD_PROC
# ... and a real JVM's pid, from /proc (it sleeps until killed at exit).
if command -v java >/dev/null; then
    printf 'class Sleep { public static void main(String[] a) throws Exception { Thread.sleep(600000); } }\n' \
        >"$work/Sleep.java"
    java -Xmx64m -XX:TieredStopAtLevel=1 "$work/Sleep.java" &
    java_pid=$!
    for _ in $(seq 100); do
        [[ $(cat "/proc/$java_pid/comm" 2>/dev/null) == java ]] && break
        sleep 0.05
    done
    expect_offered "heapd stack <TAB> (a running java)" "$java_pid" "$(complete_at "$heapd_script" "heapd stack ")"
    expect_offered "heapctl dump <TAB> (a running java)" "$java_pid" "$(complete_at "$heapctl_script" "heapctl dump ")"
else
    echo "note: no java here; the pids were checked on a made /proc only"
fi

if ((failures > 0)); then
    echo "$failures of $checks completion checks failed"
    exit 1
fi
echo "bash completion: all $checks checks passed"
