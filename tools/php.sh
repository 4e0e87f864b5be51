#!/usr/bin/env bash
# Runs PHP ($PHP, the binary of PHP_CONFIG's PHP) with the fresh build
# ($REDISLOCK_SO) loaded. A redislock installed into that PHP's conf.d
# (make install, the .deb, PIE) would load first and make PHP refuse the
# fresh build as "Module already loaded": PHP then reads its scanned ini
# files less those (tools/ini-dir.sh). Child processes inherit that
# (PHP_INI_SCAN_DIR).
set -euo pipefail
php=${PHP:-$("${PHP_CONFIG:-php-config}" --php-binary 2>/dev/null || echo php)}
so=${REDISLOCK_SO:?the built extension}
tools=$(dirname "$0")

main_ini=$("$php" -r 'echo php_ini_loaded_file() ?: "";')
if [ -n "$main_ini" ] && grep -qE '^[[:space:]]*(zend_)?extension[[:space:]]*=[^;]*redislock' "$main_ini"; then
  echo "$main_ini loads an installed redislock: remove that line (or run make uninstall) to test the fresh build" >&2
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if "$tools/ini-dir.sh" "$php" "$dir"; then
  export PHP_INI_SCAN_DIR=$dir
fi
"$php" -d "extension=$so" "$@"
