#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian bookworm machine:
# only what is missing, so a second run costs nothing. `deps.sh bench` adds
# the peers and tools the benchmarks run.
set -euo pipefail

packages=(php8.2-dev php8.2-cli libclang-dev redis-server redis-tools phpunit
          php8.2-fpm php8.2-redis libfcgi-bin openssl php-symfony-lock php-symfony-semaphore
          php-symfony-messenger php-laravel-framework php-nrk-predis)
if [ "${1:-}" = bench ]; then
  packages+=(nginx-light wrk)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! cargo php --version 2>/dev/null | grep -q ' 0\.2\.'; then
  echo "installing cargo-php 0.2.x (generates the stubs)"
  cargo install --locked cargo-php --version '^0.2' >/dev/null
fi
