#!/usr/bin/env bash
# The man pages against the programs: every subcommand `heapd --help` lists has its part in
# dist/man/heapd.8.md naming its positionals and each long option of `heapd SUB --help`; every
# command and --option of `heapctl --help` is in dist/man/heapctl.1.md; the environment variables
# the help names are in the page's ENVIRONMENT. Given MAN_DIR, the pages built there (heapd.8,
# heapctl.1) must render with groff without a warning. Prints what is missing; exits 1 if anything is.
# Usage: man_pages_check.sh HEAPD HEAPCTL SRC_DIR [MAN_DIR]
set -euo pipefail
if (($# < 3)); then
    echo "usage: $0 HEAPD HEAPCTL SRC_DIR [MAN_DIR]" >&2
    exit 2
fi
heapd=$1 heapctl=$2 src=$3 man_dir=${4:-}
heapd_md=$src/dist/man/heapd.8.md
heapctl_md=$src/dist/man/heapctl.1.md
failures=0 checked=0
problem() {
    echo "$*"
    failures=$((failures + 1))
}

# The lines of a --help's section (after "NAME:", up to the first empty line).
help_section() { awk -v name="$1:" '$0 == name {f = 1; next} f && /^$/ {exit} f'; }
# The long options of a CLI11 --help's Options section ("  --top UINT", "  -h,--help").
long_options() { help_section Options | grep -oE '^  (-[[:alnum:]],)?--[[:alnum:]-]+' | sed 's/.*,//; s/^ *//'; }
# The part of a page from the heading "## HEADING" (the exact words, then a space or the end) to
# the next heading of level 1 or 2.
page_part() {
    awk -v h="## $2" 'index($0, h " ") == 1 || $0 == h {f = 1; print; next} f && /^##? / {exit} f' "$1"
}
# Whether the text on stdin names the option $1 as a whole word (--top, not --top-n).
names_option() { grep -qE -- "(^|[^[:alnum:]-])$1([^[:alnum:]-]|\$)"; }

# heapd(8): each subcommand's part, with its positionals in the heading and all its long options.
subcommands=$("$heapd" --help | help_section Subcommands | awk '{print $1}')
[[ -n $subcommands ]] || problem "no subcommands in heapd --help"
for sub in $subcommands; do
    part=$(page_part "$heapd_md" "heapd $sub")
    if [[ -z $part ]]; then
        problem "heapd.8.md: no part \"## heapd $sub\""
        continue
    fi
    help=$("$heapd" "$sub" --help)
    for positional in $(help_section Positionals <<<"$help" | awk '/^  [[:alpha:]]/ {print $1}'); do
        head -n 1 <<<"$part" | grep -qiw -- "$positional" ||
            problem "heapd.8.md: the heading of heapd $sub does not name its positional $positional"
    done
    for option in $(long_options <<<"$help"); do
        [[ $option == --help ]] && continue  # in "Options of every subcommand"
        checked=$((checked + 1))
        names_option "$option" <<<"$part" || problem "heapd.8.md: heapd $sub $option is not in the part of heapd $sub"
    done
done
names_option --help <"$heapd_md" || problem "heapd.8.md: --help is not named"
names_option --version <"$heapd_md" || problem "heapd.8.md: --version is not named"

# heapctl(1): a part per command, and every --option the help prints anywhere.
heapctl_help=$("$heapctl" --help)
commands=$(help_section Commands <<<"$heapctl_help" | awk '/^  [[:alpha:]]/ {print $1}' | sort -u)
[[ -n $commands ]] || problem "no commands in heapctl --help"
for command in $commands; do
    [[ -n $(page_part "$heapctl_md" "$command") ]] || problem "heapctl.1.md: no part \"## $command\""
done
for option in $(grep -oE -- '--[[:alnum:]][[:alnum:]-]*' <<<"$heapctl_help" | sort -u); do
    checked=$((checked + 1))
    names_option "$option" <"$heapctl_md" || problem "heapctl.1.md: $option is not named"
done

# Environment variables the help names ($HEAPD_SOCKET...), in the page's ENVIRONMENT.
check_environment() {
    local md=$1 help=$2 environment
    environment=$(awk '/^# ENVIRONMENT/ {f = 1; next} f && /^# / {exit} f' "$md")
    for variable in $(grep -oE '\$[A-Z_]+' <<<"$help" | tr -d '$' | sort -u); do
        grep -qw -- "$variable" <<<"$environment" || problem "${md##*/}: \$$variable is not under ENVIRONMENT"
    done
}
all_heapd_help=$("$heapd" --help; for sub in $subcommands; do "$heapd" "$sub" --help; done)
check_environment "$heapd_md" "$all_heapd_help"
check_environment "$heapctl_md" "$heapctl_help"

# The built pages: every @NAME@ filled in, and no warning from groff (-ww: all of them).
if [[ -n $man_dir ]]; then
    for page in heapd.8 heapctl.1; do
        file=$man_dir/$page
        if [[ ! -s $file ]]; then
            problem "$file: not built (build the target heapd_man_pages)"
            continue
        fi
        ! grep -n '@[A-Z_]*@' "$file" || problem "$file: a @NAME@ left unfilled"
        if ! warnings=$(groff -man -t -ww -z -Tutf8 "$file" 2>&1) || [[ -n $warnings ]]; then
            problem "$file: groff -man -t -ww -z warns:"$'\n'"$warnings"
        fi
    done
fi

if ((failures > 0)); then
    echo "$failures problems with the man pages"
    exit 1
fi
echo "man pages: all $(wc -w <<<"$subcommands") subcommands of heapd, $(wc -w <<<"$commands") commands of heapctl and" \
    "$checked options are there${man_dir:+; the built pages render without warnings}"
