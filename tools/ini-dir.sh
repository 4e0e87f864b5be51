#!/usr/bin/env bash
# ini-dir.sh BIN DIR: fills DIR with links to the ini files that the PHP
# binary BIN (php or php-fpm) scans, less those that load redislock, for
# PHP_INI_SCAN_DIR: an installed redislock would load first and make PHP
# refuse a fresh build as "Module already loaded". Exits 0 when it left a
# file out, 1 when none of them loads redislock.
set -euo pipefail
bin=$1 dir=$2
mkdir -p "$dir"
# `BIN -i` lists them after "Additional .ini files parsed => ", one per
# line, comma-separated, up to a blank line ("(none)" when there are none).
files=$("$bin" -i 2>/dev/null | sed -n '/^Additional \.ini files parsed => /,/^$/p' \
  | sed 's/^Additional \.ini files parsed => //; s/,$//' | grep '^/' || true)
left_out=1
while read -r f; do
  [ -n "$f" ] || continue
  if grep -qE '^[[:space:]]*(zend_)?extension[[:space:]]*=[^;]*redislock' "$f"; then
    left_out=0
  else
    ln -sf "$f" "$dir/"
  fi
done <<<"$files"
exit $left_out
