#!/usr/bin/env bash
# make install / make uninstall: the extension into the PHP of PHP_CONFIG
# (default: php-config on PATH), for production hosts.
#   install    installs only what building needs (deps.sh build), builds as
#              the user who ran sudo (with that user's cargo and target/),
#              copies the .so into the extension dir and enables it for the
#              cli and fpm SAPIs of that PHP (Debian: mods-available +
#              phpenmod; elsewhere: redislock.ini in PHP's scan dir)
#   uninstall  disables it and removes the .so and the ini
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?install or uninstall}
php_config=${PHP_CONFIG:-$(command -v php-config || true)}
if [ -z "$php_config" ] || ! "$php_config" --version >/dev/null 2>&1; then
  echo "php-config not found: install your PHP's headers (Debian: php-dev or php8.x-dev) or set PHP_CONFIG=/path/to/php-config" >&2
  exit 1
fi
php=$("$php_config" --php-binary)
ver=$("$php_config" --version | cut -d. -f1,2)
ext_dir=$("$php_config" --extension-dir)
scan_dir=$("$php" -r 'echo PHP_CONFIG_FILE_SCAN_DIR;')
mods=/etc/php/$ver/mods-available
debian=; [ -d "$mods" ] && command -v phpenmod >/dev/null && debian=1
marker="; redislock, written by its make install"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"

if [ "$action" = uninstall ]; then
  if [ -n "$debian" ]; then
    # -p: Debian also forgets it as the administrator's choice, so that a
    # package installed later (the .deb) is enabled by its own phpenmod.
    # One SAPI per call: with several, phpdismod -p forgets only the last's.
    for sapi in $(phpquery -S -v "$ver"); do
      $sudo phpdismod -p -v "$ver" -s "$sapi" redislock
    done
    $sudo rm -f "$mods/redislock.ini"
  fi
  if [ -n "$scan_dir" ] && [ -f "$scan_dir/redislock.ini" ] && grep -qxF "$marker" "$scan_dir/redislock.ini"; then
    $sudo rm -f "$scan_dir/redislock.ini"
  fi
  $sudo rm -f "$ext_dir/redislock.so"
  echo "removed redislock from PHP $ver ($ext_dir); reload php-fpm"
  exit 0
fi

# Build as the user who ran sudo: root's PATH rarely has cargo, and a root
# build would leave root-owned files in that user's target/.
if [ "$(id -u)" -eq 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
  PHP_CONFIG=$php_config DEPS_WITHOUT_CARGO=1 tools/deps.sh build
  sudo -u "$SUDO_USER" -H bash -lc "cd $(printf %q "$PWD") && PHP_CONFIG=$(printf %q "$php_config") make so"
else
  PHP_CONFIG=$php_config tools/deps.sh build
  PHP_CONFIG=$php_config make so
fi
$sudo install -D -m 0644 target/release/libredislock.so "$ext_dir/redislock.so"
ini=$(printf '%s\n; priority=20\nextension=redislock.so\n' "$marker")
if [ -n "$debian" ]; then
  echo "$ini" | $sudo tee "$mods/redislock.ini" >/dev/null
  for sapi in cli fpm; do
    [ -d "/etc/php/$ver/$sapi" ] && $sudo phpenmod -v "$ver" -s "$sapi" redislock
  done
elif [ -n "$scan_dir" ]; then
  echo "$ini" | $sudo tee "$scan_dir/redislock.ini" >/dev/null
else
  echo "PHP $ver has no conf.d: add extension=redislock.so to its php.ini" >&2
fi
# grep reads all of it (not -q): with pipefail, a grep that quits at the
# match could leave php writing into a closed pipe (SIGPIPE, a false "no").
if ! "$php" -m | grep -x redislock >/dev/null; then
  # What PHP said when it started: the reason, for the one reading this.
  echo "PHP $ver does not load redislock after the install ($ext_dir/redislock.so, $(wc -c < "$ext_dir/redislock.so") bytes):" >&2
  "$php" -d display_startup_errors=1 -m 2>&1 | grep -i 'warning\|error\|unable\|loaded' | tail -5 >&2 || true
  exit 1
fi
echo "installed redislock into PHP $ver ($ext_dir); reload php-fpm (systemctl reload php$ver-fpm)"
