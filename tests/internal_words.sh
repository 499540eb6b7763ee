#!/usr/bin/env bash
# tests/internal_words.sh [DIR] - the repository speaks of the product, not of how its work was organised: no work-item
# numbers, sessions, rounds of work, reviews, device-time budgets, "seed" documents or machine-kind names in any file a
# user sees (documents, headers, sources, comments, scripts, test names and their output).  Prints each offending
# line and exits 1; exits 0 when there is none.
#
# Allowed uses: tests/internal_words.allow, one "path:extended-regex" per line; a line of a file is allowed when the
# regex matches it (e.g. a real use of a word in another sense).  This script is not scanned: it holds the patterns.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
PATTERNS='\bissues? ?#?[0-9]|\bsessions?\b|\brounds? ?[0-9]|\bround of\b|\breview(s|ed|er|ing)?\b|device[- ]time|\bseed (paper )?0[0-9][0-9]|\bcarry: ?\[|done[- ]when|\bdeliverables?\b|nvidia-h[12]00(-x[0-9])?|round\.sh|GPU rounds?\b'
ALLOW=tests/internal_words.allow
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -type f -not -path './.git/*' -not -path './build/*' -not -path './.petsc-cuda/*' -not -path './.tools/*' | sed 's|^\./||')
fi
bad=0 hits=()
for f in "${files[@]}"; do
  case $f in tests/internal_words.sh | tests/internal_words.allow | *.gz | *.png | *.xz) continue ;; esac
  [ -f "$f" ] || continue
  while IFS= read -r hit; do
    line=${hit#*:}; line=${line#*:}
    allowed=0
    if [ -f "$ALLOW" ]; then
      while IFS= read -r rule; do
        case $rule in '' | '#'*) continue ;; esac
        [ "${rule%%:*}" = "$f" ] && printf '%s\n' "$line" | grep -qE -- "${rule#*:}" && { allowed=1; break; }
      done <"$ALLOW"
    fi
    [ $allowed = 1 ] || { hits+=("$f:${hit%%:*}: ${line:0:160}"); bad=1; }
  done < <(grep -n -i -I -E -- "$PATTERNS" "$f" | sed 's/^\([0-9]*\):/\1:x:/')
done
if [ $bad = 0 ]; then echo "no internal words in ${#files[@]} files"; exit 0; fi
echo "${#hits[@]} lines speak of how the work was organised (real uses of a word: $ALLOW)"
printf '%s\n' "${hits[@]}"
exit 1
