#!/usr/bin/env bash
# Runs every benchmark against the Redis at REDIS_URL (tools/with-redis.sh
# starts a private one) and writes bench/RESULTS.md: the machine, the
# versions, and each benchmark's tables.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REDISLOCK_SO:?the built extension}" "${REDIS_URL:?a Redis to measure against}"
php=(tools/php.sh)
# The PHP of PHP_CONFIG, without the extension.
php_bin=${PHP:-$("${PHP_CONFIG:-php-config}" --php-binary)}
out=bench/RESULTS.md
mkdir -p bench
{
  echo "# Benchmark results"
  echo
  echo "Written by \`make bench\` on $(date -u +%Y-%m-%d); every number below comes from that one run."
  echo "Single-process loops run one PHP process against a private redis-server on"
  echo "loopback; ratios compare contenders of the same table, measured minutes apart"
  echo "on the same machine. Numbers move by 10-20% between runs on a busy machine."
  echo
  echo "## Machine and versions"
  echo
  echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; kernel $(uname -r)"
  echo "- $("$php_bin" -r 'echo "PHP ", PHP_VERSION, ", phpredis ", phpversion("redis"), ", opcache.enable_cli ", ini_get("opcache.enable_cli") ?: "0";')"
  echo "- $(redis-server --version | cut -d' ' -f1-3)"
  echo "- symfony/lock and rate-limiter $(dpkg-query -W -f='${Version}' php-symfony-lock) and $(dpkg-query -W -f='${Version}' php-symfony-rate-limiter), predis $(dpkg-query -W -f='${Version}' php-nrk-predis), nginx $(dpkg-query -W -f='${Version}' nginx-light), wrk $(dpkg-query -W -f='${Version}' wrk)"
  echo "- Laravel (illuminate) $(dpkg-query -W -f='${Version}' php-laravel-framework), BullMQ $(node -p 'require("./bench/bullmq/node_modules/bullmq/package.json").version') on Node.js $(node --version)"
  echo "- redislock $(grep -m1 '^version' Cargo.toml | cut -d'"' -f2), $(rustc --version)"
  echo
  echo "## Results"
  echo
  "${php[@]}" php/bench/cycles.php "$REDIS_URL"
  "${php[@]}" php/bench/syscalls.php "$REDIS_URL"
  "${php[@]}" php/bench/scripts.php "$REDIS_URL"
  "${php[@]}" php/bench/floors.php "$REDIS_URL"
  "${php[@]}" php/bench/shards.php "$REDIS_URL"
  "${php[@]}" php/bench/handoff.php "$REDIS_URL"
  echo
  "${php[@]}" php/bench/contention.php "$REDIS_URL"
  echo
  "${php[@]}" php/bench/queue_wake.php "$REDIS_URL"
  echo
  "${php[@]}" php/bench/primitives.php "$REDIS_URL"
  echo
  "${php[@]}" php/bench/limits.php "$REDIS_URL"
  "${php[@]}" php/bench/once.php "$REDIS_URL"
  "${php[@]}" php/bench/throughput.php "$REDIS_URL"
  "${php[@]}" php/bench/workers.php "$REDIS_URL"
  "${php[@]}" php/bench/batches.php "$REDIS_URL"
  "${php[@]}" php/bench/flows.php "$REDIS_URL"
  "${php[@]}" php/bench/telemetry.php "$REDIS_URL"
  "$php_bin" php/bench/fpm.php "$REDIS_URL"
  "${php[@]}" php/bench/memory.php "$REDIS_URL"
  cat bench/targets.md
} | tee "$out.new"
mv "$out.new" "$out"
echo "written: $out"
