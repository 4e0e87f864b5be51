#!/usr/bin/env bash
# Runs a command with REDIS_URL pointing at a private redis-server on a free
# loopback port (unless REDIS_URL is already set), then stops the server.
set -euo pipefail

if [ -n "${REDIS_URL:-}" ]; then
  exec "$@"
fi

dir=$(mktemp -d)
cleanup() {
  [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

for _ in 1 2 3 4 5; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
       --dir "$dir" --pidfile "$dir/redis.pid" --daemonize yes >/dev/null 2>&1; then
    for _ in $(seq 50); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    if redis-cli -p "$port" ping >/dev/null 2>&1; then
      export REDIS_URL="redis://127.0.0.1:$port"
      "$@"
      exit $?
    fi
  fi
done
echo "could not start redis-server" >&2
exit 1
