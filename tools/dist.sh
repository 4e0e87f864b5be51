#!/usr/bin/env bash
# The release's files, in target/dist/<version>/ (docs/install.md):
#   tools/dist.sh source   the source archive, redislock-<version>.tar.gz:
#                          the tracked files under redislock-<version>/, what
#                          phpize and PIE build from (no git needed)
#   tools/dist.sh asset    the pre-built extension for the PHP of PHP_CONFIG
#                          (default: php-config on PATH), from SO (default:
#                          target/release/libredislock.so), stripped, in a
#                          zip named as PIE looks for it
#   tools/dist.sh          (make dist) all of it for every PHP this machine
#                          builds for: this Debian's PHP (NTS), Debian trixie's
#                          8.4 in its chroot (tools/chroot.sh; root), and with
#                          ZTS=1 the ZTS builds of both (tools/zts.sh build);
#                          the .debs of each PHP; then SHA256SUMS. A ZTS build
#                          that fails (its PHP source not on the mirror) is
#                          named at the end, after the rest: exit 1
# Each prints the paths it wrote, one a line.
#
# The asset's name is PIE's (php/pie 1.4, src/Platform/
# PrePackagedBinaryAssetName.php): php_<extension>-<version>_php<major.minor>-
# <arch>-<os family>-<libc>[-debug][-zts].zip, all lower case, where NTS has
# no suffix (PIE also accepts -nts), <arch> is PIE's name of the machine
# (x86_64; arm64 for aarch64: the name every PIE with pre-built binaries
# looks for, where only some releases also try aarch64) and <libc> glibc or
# musl (PIE: musl when `ldd ls` names it). The version is Composer's of the tag, so a release's tag is the bare
# version (0.1.0, not v0.1.0). PIE unpacks the zip and installs the
# <extension>.so at its root.
#
# DIST_DIR puts the files elsewhere (the tests: a directory of their own).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)
out=${DIST_DIR:-target/dist/$version}
mkdir -p "$out"
abs=$(cd "$out" && pwd)
# Every file of the release has the time of the commit it is made from.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)

source_archive() {
  local name=redislock-$version
  git ls-files -z | tar --null -T - --transform "s,^,$name/," --sort=name \
    --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz"
  echo "$out/$name.tar.gz"
}

# The PIE name of an asset for the PHP of php-config $1.
asset_name() {
  local php_config=$1 php ver zts debug arch libc
  php=$("$php_config" --php-binary)
  ver=$("$php_config" --version | cut -d. -f1,2)
  zts=$("$php" -n -r 'echo PHP_ZTS ? "-zts" : "";')
  debug=$("$php" -n -r 'echo PHP_DEBUG ? "-debug" : "";')
  arch=$(uname -m)
  case $arch in aarch64 | arm64) arch=arm64 ;; amd64 | x64) arch=x86_64 ;; esac
  libc=glibc
  if ldd "$(command -v ls)" 2>&1 | grep -qi musl; then libc=musl; fi
  echo "php_redislock-${version}_php$ver-$arch-linux-$libc$debug$zts.zip" | tr '[:upper:]' '[:lower:]'
}

asset() {
  local php_config=${PHP_CONFIG:-$(command -v php-config)} so=${SO:-target/release/libredislock.so}
  local name dir
  name=$(asset_name "$php_config")
  if [ ! -f "$so" ]; then
    echo "tools/dist.sh: $so is not built (make build)" >&2
    exit 1
  fi
  dir=$(mktemp -d)
  strip --strip-unneeded -o "$dir/redislock.so" "$so"
  cp LICENSE "$dir/LICENSE"
  touch -d "@$epoch" "$dir/redislock.so" "$dir/LICENSE"
  rm -f "$out/$name"
  (cd "$dir" && zip -qX "$abs/$name" redislock.so LICENSE)
  rm -rf "$dir"
  echo "$out/$name"
}

sums() {
  (cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs -r sha256sum > SHA256SUMS)
  echo "$out/SHA256SUMS"
}

# Copies the files a command printed (paths under the chroot's target/ or
# this one's) into $out, printing where they went.
collect() {
  local from=$1 path
  while read -r path; do
    case "$path" in
      target/*) path=$from/${path#target/} ;;
      *) continue ;;
    esac
    [ "$(dirname "$path")" = "$out" ] && { echo "$path"; continue; }
    cp "$path" "$out/" && echo "$out/$(basename "$path")"
  done
}

everything() {
  local missing=() zts="tools/zts.sh build >&2 && PHP_CONFIG=target/zts/php/bin/php-config SO=target/zts/cargo/release/libredislock.so tools/dist.sh asset"
  rm -f "$out"/*
  source_archive
  # (-W: cargo, not make, decides whether the release build is current:
  # a build without LTO, as the tests make one, is not.)
  make -s -W Cargo.toml build >&2
  asset
  make -s deb | collect target
  if [ "${ZTS:-0}" = 1 ]; then
    bash -c "$zts" || missing+=("the ZTS build of this machine's PHP")
  fi
  tools/chroot.sh trixie "tools/deps.sh dist >&2 && make -s -W Cargo.toml build >&2 && tools/dist.sh asset && make -s deb" \
    | collect target/chroot/trixie/target
  if [ "${ZTS:-0}" = 1 ]; then
    # (Needs trixie's php8.4 source package from the mirror.)
    tools/chroot.sh trixie "$zts" | collect target/chroot/trixie/target || missing+=("the ZTS build of trixie's PHP")
  fi
  sums
  if [ ${#missing[@]} -gt 0 ]; then
    printf 'tools/dist.sh: not built (see above): %s\n' "${missing[@]}" >&2
    exit 1
  fi
}

case "${1:-all}" in
  source) source_archive ;;
  asset) asset ;;
  sums) sums ;;
  all) everything ;;
  *) echo "usage: tools/dist.sh [source|asset|sums]" >&2; exit 2 ;;
esac
