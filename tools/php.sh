#!/usr/bin/env bash
# Runs PHP ($PHP, the binary of PHP_CONFIG's PHP) with the fresh build
# ($REDISLOCK_SO) loaded. A redislock installed into that PHP's conf.d
# (make install, the .deb, PIE) would load first and make PHP refuse the
# fresh build as "Module already loaded": PHP then reads a copy of its
# scanned ini files without the ones that load redislock. Child processes
# inherit that (PHP_INI_SCAN_DIR).
set -euo pipefail
php=${PHP:-php}
so=${REDISLOCK_SO:?the built extension}
loads_redislock() { grep -qE '^[[:space:]]*(zend_)?extension[[:space:]]*=[^;]*redislock' "$1"; }

main_ini=$("$php" -r 'echo php_ini_loaded_file() ?: "";')
if [ -n "$main_ini" ] && loads_redislock "$main_ini"; then
  echo "$main_ini loads an installed redislock: remove that line (or run make uninstall) to test the fresh build" >&2
  exit 1
fi
scanned=$("$php" -r 'echo str_replace(",", "\n", (string) php_ini_scanned_files());' | sed 's/^[[:space:]]*//')
any_loads_redislock() {
  local f
  while read -r f; do
    [ -n "$f" ] && loads_redislock "$f" && return 0
  done <<<"$scanned"
  return 1
}
if any_loads_redislock; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  while read -r f; do
    if [ -n "$f" ] && ! loads_redislock "$f"; then
      ln -s "$f" "$dir/"
    fi
  done <<<"$scanned"
  export PHP_INI_SCAN_DIR=$dir
  "$php" -d "extension=$so" "$@"
  exit $?
fi
exec "$php" -d "extension=$so" "$@"
