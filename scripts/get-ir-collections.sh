#!/usr/bin/env bash
# Brings the classic IR test collections used as development sets by
# bench:search and bench:research (Cranfield, CISI, NPL) into
# ${SCOUR_IR_DATA:-benchmarks/.data/ir}/<name>/, from public GitHub
# repositories that carry the original Glasgow/SMART files unchanged.
# Nothing of them is committed (benchmarks/.data is ignored).
#   bash scripts/get-ir-collections.sh            # clones from github.com
#   IR_MIRROR=/path/to/mirrors bash scripts/...   # or reads local bare mirrors
#                                                 # named <owner>+<name>/repo
# CACM is deliberately not fetched: it is held out from development.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${SCOUR_IR_DATA:-$root/benchmarks/.data/ir}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# name  owner/repo  file-in-repo ...
sources=(
  "cranfield noramtboraas/information-retrieval cran.all.1400 cran.qry cranqrel"
  "cisi Shakiba-Alipour/Information-Retrieval-on-CISI CISI.ALL CISI.QRY CISI.REL"
  "npl stefreschke/Information-Retrieval npl/doc-text npl/query-text npl/rlv-ass"
)
for line in "${sources[@]}"; do
  read -r name repo files <<<"$line"
  mkdir -p "$out/$name"
  if [ -n "${IR_MIRROR:-}" ]; then
    gitdir="$IR_MIRROR/${repo/\//+}/repo"
  else
    gitdir="$tmp/${repo/\//+}.git"
    git clone --quiet --bare --depth 1 "https://github.com/$repo.git" "$gitdir"
  fi
  for f in $files; do git --git-dir="$gitdir" show "HEAD:$f" > "$out/$name/$(basename "$f")"; done
  echo "get-ir-collections: $name ready in $out/$name"
done
