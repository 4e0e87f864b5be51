#!/usr/bin/env bash
# Fetches the frameworks' own test suites from Debian's source packages (the
# versions Debian ships) into target/frameworks/<package>, once. A private
# apt configuration holds the deb-src lines, so the machine's sources stay
# as they are.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/frameworks"
apt="$dest/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"

opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=1"
      -o "APT::Sandbox::User=$(id -un)")
fetched=0

# fetch <source package> <paths inside its orig tarball to extract...>
fetch() {
  local package=$1; shift
  [ -e "$dest/$package/.done" ] && return
  if [ "$fetched" = 0 ]; then
    . /etc/os-release
    printf 'deb-src http://deb.debian.org/debian %s main\ndeb-src http://deb.debian.org/debian-security %s-security main\n' \
      "$VERSION_CODENAME" "$VERSION_CODENAME" > "$apt/sources.list"
    apt-get "${opts[@]}" update -qq
    fetched=1
  fi
  rm -rf "$dest/$package.tmp" && mkdir -p "$dest/$package.tmp"
  (cd "$dest/$package.tmp" && apt-get "${opts[@]}" source --download-only -qq "$package" >/dev/null)
  local orig
  orig=$(ls "$dest/$package.tmp"/*.orig.tar.* | head -1)
  tar -xf "$orig" -C "$dest/$package.tmp" --strip-components=1 --wildcards "${@/#/*/}"
  rm -f "$dest/$package.tmp"/*.tar.* "$dest/$package.tmp"/*.dsc
  rm -rf "$dest/$package" && mv "$dest/$package.tmp" "$dest/$package"
  touch "$dest/$package/.done"
  echo "fetched the test suites of Debian's $package source package"
}

fetch symfony src/Symfony/Component/Lock/Tests src/Symfony/Component/Semaphore/Tests
fetch php-laravel-framework tests/Integration/Cache/RedisCacheLockTest.php
