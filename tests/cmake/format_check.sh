#!/usr/bin/env bash
# Fails when a C++ source under version control is not formatted as .clang-format says.
# Usage: format_check.sh SOURCE_DIR [CLANG_FORMAT]
set -euo pipefail
source_dir=$1
clang_format=${2:-clang-format}
cd "$source_dir"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.h' \) -print)
fi
[ ${#files[@]} -gt 0 ] || { echo "no C++ sources found under $source_dir" >&2; exit 1; }
"$clang_format" --dry-run --Werror "${files[@]}"
echo "${#files[@]} files formatted as .clang-format says"
