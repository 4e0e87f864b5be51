#!/usr/bin/env bash
# make test-zts: the phpunit suite under a thread-safe (ZTS) PHP, which
# Debian does not ship. Built once into target/zts/php from Debian's own
# php8.2 source package (`apt-get source`, through a private apt state with
# a deb-src line: the system's apt is untouched), configured --enable-zts
# with the extensions the suite uses, with Debian's php.ini for the CLI and
# phpredis (Debian's php-redis source) for the tests' own Redis client.
# Then the extension is built against it (target/zts/cargo) and the suite
# runs, its PHP-FPM tests on this PHP's own (ZTS) php-fpm. What this PHP
# lacks is skipped and said: the browser tests (no curl or gd here).
# `tools/zts.sh build` stops once the extension is built (tools/dist.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
zts=$repo/target/zts
php=$zts/php/bin/php

if [ ! -x "$php" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev libxml2-dev libonig-dev libssl-dev libicu-dev pkg-config >/dev/null
  apt=$zts/apt
  rm -rf "$zts/src" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$zts/src"
  release=$(. /etc/os-release && echo "$VERSION_CODENAME")
  echo "deb-src http://deb.debian.org/debian $release main" > "$apt/sources.list"
  o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Dir::State::status=/dev/null
     -o APT::Sandbox::User=root)
  apt-get "${o[@]}" update -qq >/dev/null
  version=$(php-config --version | cut -d. -f1,2)
  (cd "$zts/src" && apt-get "${o[@]}" source --download-only -qq "php$version" php-redis >/dev/null)
  (cd "$zts/src" && tar xf php"$version"_*.orig.tar.xz && tar xf php-redis_*.orig.tar.xz)
  echo "building a ZTS PHP $version into $zts/php"
  (cd "$zts"/src/php-"$version".* &&
    ./configure --prefix="$zts/php" --enable-zts --disable-all --enable-cli --disable-cgi --disable-phpdbg \
      --enable-pcntl --enable-posix --enable-sockets --with-libxml --enable-dom --enable-xml --enable-xmlwriter \
      --enable-xmlreader --enable-simplexml --enable-tokenizer --enable-ctype --enable-filter --enable-session \
      --enable-mbstring --enable-intl --with-openssl --enable-phar --enable-fileinfo --enable-fpm \
      --with-config-file-scan-dir="$zts/php/conf.d" >"$zts/configure.log" 2>&1 &&
    make -j"$(nproc)" >"$zts/make.log" 2>&1 && make install >>"$zts/make.log" 2>&1) ||
    { tail -20 "$zts/make.log" "$zts/configure.log" >&2 2>/dev/null; exit 1; }
  cp "/etc/php/$version/cli/php.ini" "$zts/php/lib/php.ini"
  # Debian's php-redis source carries two phpredis releases: the newer.
  phpredis=$(ls -d "$zts"/src/redis-[0-9]* | sort -V | tail -1)
  (cd "$phpredis" && "$zts/php/bin/phpize" >/dev/null &&
    ./configure --with-php-config="$zts/php/bin/php-config" --disable-redis-igbinary --disable-redis-msgpack \
      --disable-redis-lzf --disable-redis-zstd --disable-redis-lz4 >"$zts/redis.log" 2>&1 &&
    make -j"$(nproc)" >>"$zts/redis.log" 2>&1 && make install >>"$zts/redis.log" 2>&1) ||
    { tail -20 "$zts/redis.log" >&2; exit 1; }
  mkdir -p "$zts/php/conf.d"
  echo "extension=redis.so" > "$zts/php/conf.d/20-redis.ini"
  # Debian's PHP looks for its PHP libraries (phpunit, the frameworks) there.
  echo 'include_path=".:/usr/share/php"' > "$zts/php/conf.d/10-include-path.ini"
fi
echo "== $("$php" -v | head -1)"
PHP_CONFIG=$zts/php/bin/php-config PHP=$php CARGO_TARGET_DIR=$zts/cargo cargo build --release
[ "${1:-}" = build ] && exit 0
tools/frameworks.sh
REDISLOCK_BROWSER=0 PHP=$php REDISLOCK_SO=$zts/cargo/release/libredislock.so \
  tools/php.sh /usr/bin/phpunit --configuration php/tests/phpunit.xml
