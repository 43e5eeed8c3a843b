#!/usr/bin/env bash
# Runs the vendored Boa crates' own unit tests (`cargo test --lib`, about 1,700 tests: the engine's
# 1,115 among them) on the copies here, patches and all: the engine is tested as an engine, not
# only through earshot. The crates are not workspace members, so they run from a scratch workspace
# of their own (with this repository's Cargo.lock for the versions both share), in a target dir of
# their own. Skipped when vendor/ is exactly what last passed on this machine.
set -euo pipefail
cd "$(dirname "$0")"

stamp_dir="${HOME}/.cache/earshot-vendor-tested"
stamp=$(find . -type f -not -name '*.patch' | LC_ALL=C sort | xargs sha256sum | sha256sum | awk '{ print $1 }')
if [ -e "$stamp_dir/$stamp" ]; then
  echo "vendor/: the vendored crates' unit tests passed on this machine for exactly this tree"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crates=(boa_string boa_gc boa_interner boa_ast boa_parser boa_engine boa_wintertc boa_runtime)
for crate in "${crates[@]}"; do
  cp -r "$crate" "$work/$crate"
done
{
  echo '[workspace]'
  echo 'resolver = "3"'
  printf 'members = ['
  printf '"%s", ' "${crates[@]}"
  echo ']'
} > "$work/Cargo.toml"
cp ../Cargo.lock "$work/Cargo.lock"
CARGO_TARGET_DIR="${HOME}/.cache/earshot-vendor-target" cargo test --quiet --lib --workspace \
  --manifest-path "$work/Cargo.toml"
mkdir -p "$stamp_dir"
touch "$stamp_dir/$stamp"
