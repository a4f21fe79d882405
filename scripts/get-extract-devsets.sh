#!/usr/bin/env bash
# Brings the public main-content extraction sets used as DEVELOPMENT sets by
# bench:extract (beside the Zyte article benchmark) into
# ${SCOUR_EXTRACT_DATA:-benchmarks/.data/extract}/<name>/{input,gold}/.
# Nothing of them is committed (benchmarks/.data is ignored).
#   bash scripts/get-extract-devsets.sh               # clones from github.com
#   EXTRACT_MIRROR=/path/to/mirrors bash scripts/...  # or reads local bare
#                                                     # mirrors <owner>+<name>/repo
# The sets come from j-szulc/html-cleaning-dataset-merged, which mirrors them
# unchanged in one folder layout (<set>/input/<id>.html, <set>/GoldStandard/<id>.txt):
#   cleaneval        CleanEval 2007 shared task, development + final sets
#                    (blogs, forums, personal and institutional pages, lists,
#                    FAQs; gold text marked up with <p>/<h>/<l>)
#   dragnet          Dragnet's data (Kohlschuetter/Peters; news, blogs, shops
#                    and comment threads; gold = content, then comments after
#                    a "!@#$%^&*() COMMENTS" line)
#   readability      Mozilla Readability's test pages (docs, blogs, news in
#                    several languages; gold = Readability's expected output,
#                    an extractor's answer rather than a human's)
#   cleanportaleval  CleanPortalEval (news portals and blogs, 70 pages)
# trafilatura's own evaluation data is deliberately NOT fetched: it is the
# held-out set the extractor is checked on.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${SCOUR_EXTRACT_DATA:-$root/benchmarks/.data/extract}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
repo="j-szulc/html-cleaning-dataset-merged"
commit="46e01a04b47051838a228bf23631430b2c9de375"

if [ -n "${EXTRACT_MIRROR:-}" ]; then
  gitdir="$EXTRACT_MIRROR/${repo/\//+}/repo"
else
  gitdir="$tmp/${repo/\//+}.git"
  git clone --quiet --bare --depth 1 "https://github.com/$repo.git" "$gitdir"
fi
rev="$commit"
git --git-dir="$gitdir" cat-file -e "$rev^{commit}" 2>/dev/null || rev=HEAD

# name  folder-in-repo ...
sets=(
  "cleaneval cleaneval-dev cleaneval-final"
  "dragnet dragnet_data"
  "readability readability"
  "cleanportaleval CleanPortalEval-master"
)
for line in "${sets[@]}"; do
  read -r name folders <<<"$line"
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name/input" "$out/$name/gold"
  for folder in $folders; do
    # Page ids stay the file names; CleanEval's two sets share numbers, so they get a prefix.
    prefix=""
    case "$folder" in cleaneval-dev) prefix="dev-" ;; cleaneval-final) prefix="final-" ;; esac
    mkdir -p "$tmp/x"
    git --git-dir="$gitdir" archive "$rev" "$folder/input" "$folder/GoldStandard" | tar -x -C "$tmp/x"
    for f in "$tmp/x/$folder/GoldStandard/"*.txt; do
      id="$(basename "$f" .txt)"
      [ -f "$tmp/x/$folder/input/$id.html" ] || continue
      cp "$f" "$out/$name/gold/$prefix$id.txt"
      cp "$tmp/x/$folder/input/$id.html" "$out/$name/input/$prefix$id.html"
    done
    rm -rf "$tmp/x"
  done
  echo "get-extract-devsets: $name ready in $out/$name ($(ls "$out/$name/gold" | wc -l) pages)"
done
