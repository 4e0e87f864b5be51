#!/usr/bin/env bash
# Fetches the frameworks' own test suites from Debian's source packages (the
# versions Debian ships) into target/frameworks/<package>, once. A private
# apt configuration holds the deb-src lines, so the machine's sources stay
# as they are. FRAMEWORK_SUITES=optional (the other-release chroot): a
# source package the mirror does not serve is said and skipped, and its
# tests skip themselves visibly; elsewhere it fails the run.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/frameworks"
apt="$dest/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"

opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1"
      -o "APT::Sandbox::User=$(id -un)")
fetched=0

# sources [security]: the deb-src lines of this release (and its security archive)
sources() {
  . /etc/os-release
  printf 'deb-src http://deb.debian.org/debian %s main\n' "$VERSION_CODENAME" > "$apt/sources.list"
  if [ -n "${1:-}" ]; then
    printf 'deb-src http://deb.debian.org/debian-security %s-security main\n' "$VERSION_CODENAME" >> "$apt/sources.list"
  fi
  rm -rf "$apt/lists" && mkdir -p "$apt/lists/partial"
  apt-get "${opts[@]}" update -qq
}

# fetch <source package> <paths inside its orig tarball to extract...>
fetch() {
  local package=$1; shift
  # Done when fetched with these paths (a path added later fetches again).
  local done
  done=".done-$(printf '%s\n' "$@" | md5sum | cut -c1-12)"
  [ -e "$dest/$package/$done" ] && return
  if [ "$fetched" = 0 ]; then
    sources security
    fetched=1
  fi
  rm -rf "$dest/$package.tmp" && mkdir -p "$dest/$package.tmp"
  if ! (cd "$dest/$package.tmp" && apt-get "${opts[@]}" source --download-only -qq "$package" >/dev/null 2>&1); then
    # A mirror without the security archive's pool: the release's own version.
    echo "$package: not from the security archive, trying the release's version"
    sources
    if ! (cd "$dest/$package.tmp" && apt-get "${opts[@]}" source --download-only -qq "$package" >/dev/null); then
      if [ "${FRAMEWORK_SUITES:-}" = optional ]; then
        echo "$package: the mirror does not serve this release's source package: its test suites are skipped"
        rm -rf "$dest/$package.tmp"
        return 0
      fi
      exit 1
    fi
  fi
  local orig
  orig=$(ls "$dest/$package.tmp"/*.orig.tar.* | head -1)
  tar -xf "$orig" -C "$dest/$package.tmp" --strip-components=1 --wildcards "${@/#/*/}"
  rm -f "$dest/$package.tmp"/*.tar.* "$dest/$package.tmp"/*.dsc
  rm -rf "$dest/$package" && mv "$dest/$package.tmp" "$dest/$package"
  touch "$dest/$package/$done"
  echo "fetched the test suites of Debian's $package source package"
}

fetch symfony src/Symfony/Component/Lock/Tests src/Symfony/Component/Semaphore/Tests
fetch php-laravel-framework tests/Integration/Cache/RedisCacheLockTest.php tests/Bus/BusBatchTest.php
