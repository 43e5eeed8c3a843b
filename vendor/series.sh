#!/usr/bin/env bash
# The patched Boa crates in vendor/ as a patch series over their pristine 0.22.0 releases.
#
#   vendor/series.sh check         CI: pristine crate + vendor/patches/<crate>/*.patch, in order,
#                                  is exactly vendor/<crate>
#   vendor/series.sh record SLUG   after editing vendor/<crate>: what the series does not yet
#                                  hold becomes its next patch, NNNN-SLUG.patch (review it, and
#                                  describe the change in vendor/README.md)
#
# Pristine crates come from static.crates.io (checked against the SHA-256 in the lock below) and
# are kept under $HOME/.cache/earshot-pristine. What a vendored copy leaves out of its release
# (files cargo adds when packaging, and a test or bench folder the copy does not build) is listed
# in DROPPED, so that a patch never has to delete it.
set -euo pipefail
cd "$(dirname "$0")"

VERSION=0.22.0
CRATES=(boa_string boa_gc boa_interner boa_ast boa_parser boa_engine boa_wintertc boa_runtime)
declare -A DROPPED=(
  [boa_engine]="benches tests"
)
ALWAYS_DROPPED=".cargo_vcs_info.json Cargo.lock Cargo.toml.orig .cargo-ok"
CACHE="${HOME}/.cache/earshot-pristine"

pristine() {
  local crate=$1 out=$2
  mkdir -p "$CACHE"
  local archive="$CACHE/$crate-$VERSION.crate"
  if [ ! -s "$archive" ]; then
    curl -sSfL --retry 3 -o "$archive.tmp" "https://static.crates.io/crates/$crate/$crate-$VERSION.crate"
    mv "$archive.tmp" "$archive"
  fi
  local want got
  want=$(awk -v c="$crate" '$1 == c { print $2 }' pristine.sha256)
  got=$(sha256sum "$archive" | awk '{ print $1 }')
  if [ "$want" != "$got" ]; then
    echo "vendor/series.sh: $crate-$VERSION.crate has SHA-256 $got, expected $want; delete $archive and run again" >&2
    exit 1
  fi
  rm -rf "$out"
  mkdir -p "$out"
  tar xzf "$archive" -C "$out" --strip-components=1
  for dropped in $ALWAYS_DROPPED ${DROPPED[$crate]:-}; do
    rm -rf "${out:?}/$dropped"
  done
}

mode=${1:-check}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for crate in "${CRATES[@]}"; do
  pristine "$crate" "$work/$crate"
  for patch in patches/"$crate"/*.patch; do
    [ -e "$patch" ] || continue
    if ! patch -s -p1 -d "$work/$crate" --no-backup-if-mismatch < "$patch"; then
      echo "vendor/series.sh: $patch does not apply to pristine $crate $VERSION" >&2
      failed=1
    fi
  done
  case "$mode" in
    check)
      if ! diff -r "$work/$crate" "$crate" > "$work/$crate.diff"; then
        echo "vendor/series.sh: vendor/$crate is not pristine $crate $VERSION plus vendor/patches/$crate; record the change (vendor/series.sh record SLUG) and review it. Differences:" >&2
        head -40 "$work/$crate.diff" >&2
        failed=1
      fi
      ;;
    record)
      slug=${2:?usage: vendor/series.sh record SLUG}
      count=$(find "patches/$crate" -name '*.patch' 2>/dev/null | wc -l)
      next="patches/$crate/$(printf '%04d' $((count + 1)))-$slug.patch"
      mkdir -p "patches/$crate"
      (cd "$work" && mv "$crate" a && cp -r "$OLDPWD/$crate" b && { diff -ruN a b || true; }) > "$next"
      rm -rf "$work/a" "$work/b"
      if [ -s "$next" ]; then echo "recorded $next"; else rm "$next"; fi
      ;;
    *)
      echo "usage: vendor/series.sh check | record SLUG" >&2
      exit 2
      ;;
  esac
done
if [ "$failed" = 1 ]; then
  exit 1
fi
[ "$mode" = check ] && echo "vendor/: ${#CRATES[@]} crates are pristine $VERSION plus their patch series"
exit 0
