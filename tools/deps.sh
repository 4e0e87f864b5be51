#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian (or Ubuntu)
# machine: only what is missing, so a second run costs nothing.
#   deps.sh build   what building needs (make build, make install): the PHP headers, libclang
#   deps.sh demo    and what the demo runs (make demo): redis-server
#   deps.sh [test]  and what the tests run: redis-server, phpunit, php-fpm, phpredis,
#                   Python's opentelemetry-proto (the OTLP receiver, from PyPI),
#                   SQLite (a Laravel test's database transactions),
#                   the frameworks, the stubs' checker (PHPStan's PHPDoc parser), PHP-Parser (the doctor), composer,
#                   promtool and systemd-analyze (the docs' scrape config and unit),
#                   Chromium and its WebDriver (the
#                   dashboard's browser tests, over php-curl), php-gd (their screenshots' checks)
#   deps.sh dist    and what the release's files need (make dist): zip, strip,
#                   dpkg-deb, debootstrap (the trixie chroot)
#   deps.sh bench   and the peers and tools the benchmarks run (strace counts system calls;
#                   Node.js and BullMQ from npm, bench/bullmq's lock file)
# The PHP packages are the distribution's default PHP (php-dev, php-fpm...),
# unless PHP_CONFIG names another PHP: then that PHP is used as it is.
set -euo pipefail
mode=${1:-test}

# (make install under sudo checks root's packages but builds with the
# invoking user's cargo: it skips this check, the build makes it.)
if [ -n "${DEPS_WITHOUT_CARGO:-}" ]; then
  :
elif ! command -v cargo >/dev/null; then
  echo "cargo not found: redislock needs Rust >= 1.89 (edition 2024); install it with rustup:" >&2
  echo "  curl --proto '=https' -sSf https://sh.rustup.rs | sh" >&2
  exit 1
elif rust=$(cargo --version | cut -d' ' -f2) && [ "$(printf '%s\n1.89.0\n' "$rust" | sort -V | head -1)" != 1.89.0 ]; then
  echo "cargo $rust is too old: redislock needs Rust >= 1.89 (rustup update)" >&2
  exit 1
fi

packages=(libclang-dev)
optional=()
if [ "$(command -v php-config || true)" = "$(command -v "${PHP_CONFIG:-php-config}" || true)" ]; then
  packages+=(php-dev php-cli)
  case $mode in build|demo) ;; *) packages+=(php-fpm php-redis php-mbstring php-gd php-curl php-sqlite3) ;; esac
fi
if [ "$mode" = demo ]; then
  packages+=(redis-server)
fi
if [ "$mode" = dist ]; then
  packages+=(zip unzip binutils dpkg-dev debootstrap)
fi
if [ "$mode" = test ] || [ "$mode" = bench ]; then
  packages+=(redis-server redis-tools phpunit libfcgi-bin openssl dpkg-dev binutils php-symfony-lock php-symfony-semaphore
             php-symfony-messenger php-symfony-dependency-injection php-symfony-config php-symfony-yaml php-intl php-xml php-laravel-framework php-mockery php-phpstan-phpdoc-parser php-parser composer
             prometheus systemd chromium chromium-driver iproute2 nftables faketime libtcmalloc-minimal4 nginx-light
             python3 python3-pip zip unzip)
  # Where the release has it (bookworm: yes, trixie: no); the tests use it
  # when it is there, the benchmarks need it.
  optional+=(php-nrk-predis php-symfony-rate-limiter)
fi
if [ "$mode" = bench ]; then
  packages+=(wrk strace php-symfony-rate-limiter php-symfony-cache)
  # Debian's Node.js, unless one is there already (NodeSource's brings its own npm).
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
known() { apt-cache show "$1" >/dev/null 2>&1; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
for p in "${optional[@]}"; do
  # Unknown to apt lists that exist: not in this release.
  installed "$p" || { ! known "$p" && compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; } || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  for p in "${optional[@]}"; do
    known "$p" || missing=("${missing[@]/#$p}")
  done
  read -ra missing <<<"${missing[*]}"
  if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
if [ "$mode" = test ] || [ "$mode" = bench ]; then
  # The tests' OTLP receiver (tools/otlp_receiver.py) decodes with
  # OpenTelemetry's own Python classes, from PyPI (Debian has none).
  otlp=$(dirname "$0")/../target/otlp-python
  if [ ! -d "$otlp/opentelemetry/proto" ]; then
    echo "installing: opentelemetry-proto (PyPI, into target/otlp-python)"
    python3 -m pip install -q --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
      --target "$otlp" 'opentelemetry-proto==1.45.2' >/dev/null
  fi
fi
if [ "$mode" = bench ]; then
  bullmq=$(dirname "$0")/../bench/bullmq
  # Installed as the lock file says, again only when it changed.
  if [ ! -f "$bullmq/node_modules/.package-lock.json" ] || [ "$bullmq/package-lock.json" -nt "$bullmq/node_modules/.package-lock.json" ]; then
    echo "installing: BullMQ (npm ci in bench/bullmq)"
    (cd "$bullmq" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi
