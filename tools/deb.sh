#!/usr/bin/env bash
# make deb: two packages in target/deb/, their paths printed (the
# extension's last).
# - php<ver>-redislock_<version>-1_<arch>.deb for the PHP of PHP_CONFIG
#   (default: php-config on PATH), laid out as Debian's own PHP extensions:
#   the .so in that PHP's extension dir, redislock.ini in
#   /etc/php/<ver>/mods-available (enabled for every SAPI on install,
#   disabled on removal: tools/deb/), Depends on the phpapi-<api> it was
#   built against. Needs the release build (target/release/libredislock.so).
# - redislock-tools_<version>-1_all.deb: the operator CLI (/usr/bin/redislock),
#   the dashboard and metrics pages (/usr/share/redislock/web) and the PHP
#   classes beside them, the Laravel and Symfony adapters among them
#   (/usr/share/php/RedisLock, with an autoload.php).
# Both carry tools/deb/changelog, whose version must be Cargo.toml's and
# whose last signer is the Maintainer.
set -euo pipefail
cd "$(dirname "$0")/.."
php_config=${PHP_CONFIG:-$(command -v php-config)}
ver=$("$php_config" --version | cut -d. -f1,2)
api=$("$php_config" --phpapi)
ext_dir=$("$php_config" --extension-dir)
version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)-1
arch=$(dpkg --print-architecture)
logged=$(sed -n '1s/^redislock (\([^)]*\)).*/\1/p' tools/deb/changelog)
if [ "$logged" != "$version" ]; then
  echo "tools/deb/changelog's first entry is $logged, Cargo.toml says $version: add an entry" >&2
  exit 1
fi
maintainer=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' tools/deb/changelog | head -1)
# The changelog as Debian ships it (reproducible: no name or time in the gzip).
doc() {
  mkdir -p "$1/usr/share/doc/$2"
  cp LICENSE "$1/usr/share/doc/$2/copyright"
  gzip -9n < tools/deb/changelog > "$1/usr/share/doc/$2/changelog.Debian.gz"
}
pkg=php$ver-redislock
root=target/deb/$pkg
rm -rf "$root"
install -D -m 0644 target/release/libredislock.so "$root$ext_dir/redislock.so"
strip --strip-unneeded "$root$ext_dir/redislock.so"
mkdir -p "$root/etc/php/$ver/mods-available" "$root/DEBIAN"
printf '; configuration for php redislock module\n; priority=20\nextension=redislock.so\n' \
  > "$root/etc/php/$ver/mods-available/redislock.ini"
doc "$root" "$pkg"
echo "/etc/php/$ver/mods-available/redislock.ini" > "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  sed "s/@VER@/$ver/g" "tools/deb/$script" > "$root/DEBIAN/$script"
  chmod 0755 "$root/DEBIAN/$script"
done
# The shared libraries it links (libc, libgcc) as dpkg-shlibdeps sees them.
shlibs=$(cd "$root" && mkdir -p debian && printf 'Source: redislock\n\nPackage: %s\nArchitecture: any\n' "$pkg" > debian/control \
  && dpkg-shlibdeps -O "${ext_dir#/}/redislock.so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p'; rm -rf debian)
cat > "$root/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Pre-Depends: php-common (>= 2:69~)
Depends: phpapi-$api, php$ver-common, ${shlibs:-libc6}
Provides: php-redislock
Section: php
Priority: optional
Description: distributed locks and task queues on Redis for PHP $ver
 The redislock extension: Lock_Service, RedisLock and RedisQueue with the API
 of the well-known userland code, and the RedisLock\\ object API: waiting in
 line without polling, fencing tokens, lease renewal, release at request end,
 leased queues, semaphores, read-write locks, Redlock, Sentinel and Cluster.
CONTROL

# redislock-tools: PHP code only, for any architecture.
tools=target/deb/redislock-tools
rm -rf "$tools"
mkdir -p "$tools/usr/share/php/RedisLock" "$tools/usr/share/redislock/bin" "$tools/usr/share/redislock/web" "$tools/usr/bin" "$tools/DEBIAN"
cp -r php/src/Operator php/src/Laravel php/src/Symfony "$tools/usr/share/php/RedisLock/"
cp tools/deb/autoload.php "$tools/usr/share/php/RedisLock/autoload.php"
# bin/ and web/ find the classes at ../src, as in the repository.
ln -s ../php/RedisLock "$tools/usr/share/redislock/src"
install -m 0755 php/bin/redislock "$tools/usr/share/redislock/bin/redislock"
install -m 0644 php/web/index.php php/web/metrics.php "$tools/usr/share/redislock/web/"
ln -s ../share/redislock/bin/redislock "$tools/usr/bin/redislock"
doc "$tools" redislock-tools
find "$tools" -type f -exec chmod go-w {} +
cat > "$tools/DEBIAN/control" <<CONTROL
Package: redislock-tools
Version: $version
Architecture: all
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$tools" | cut -f1)
Depends: php-cli | php$ver-cli, php-redislock
Recommends: php-parser
Suggests: php-fpm
Section: php
Priority: optional
Description: operator tools and framework adapters for redislock
 The redislock command (queues, running tasks, workers, dead letters, locks,
 pause, resume, check and Prometheus metrics), the dashboard and metrics
 pages to serve with PHP-FPM (/usr/share/redislock/web), and the Laravel
 cache and queue drivers and the Symfony Lock, Semaphore and Messenger
 adapters: require /usr/share/php/RedisLock/autoload.php.
CONTROL
dpkg-deb --root-owner-group -Zxz --build "$tools" "target/deb/redislock-tools_${version}_all.deb" >/dev/null
dpkg-deb --root-owner-group -Zxz --build "$root" "target/deb/${pkg}_${version}_${arch}.deb" >/dev/null
echo "target/deb/redislock-tools_${version}_all.deb"
echo "target/deb/${pkg}_${version}_${arch}.deb"
