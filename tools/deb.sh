#!/usr/bin/env bash
# make deb: target/deb/php<ver>-redislock_<version>-1_<arch>.deb for the
# PHP of PHP_CONFIG (default: php-config on PATH), laid out as Debian's own
# PHP extensions: the .so in that PHP's extension dir, redislock.ini in
# /etc/php/<ver>/mods-available (enabled for every SAPI on install,
# disabled on removal: tools/deb/), Depends on the phpapi-<api> it was
# built against. Needs the release build (target/release/libredislock.so).
set -euo pipefail
cd "$(dirname "$0")/.."
php_config=${PHP_CONFIG:-$(command -v php-config)}
ver=$("$php_config" --version | cut -d. -f1,2)
api=$("$php_config" --phpapi)
ext_dir=$("$php_config" --extension-dir)
version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)-1
arch=$(dpkg --print-architecture)
pkg=php$ver-redislock
root=target/deb/$pkg
rm -rf "$root"
install -D -m 0644 target/release/libredislock.so "$root$ext_dir/redislock.so"
strip --strip-unneeded "$root$ext_dir/redislock.so"
mkdir -p "$root/etc/php/$ver/mods-available" "$root/usr/share/doc/$pkg" "$root/DEBIAN"
printf '; configuration for php redislock module\n; priority=20\nextension=redislock.so\n' \
  > "$root/etc/php/$ver/mods-available/redislock.ini"
cp LICENSE "$root/usr/share/doc/$pkg/copyright"
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
Maintainer: ${DEBFULLNAME:-redislock authors} <${DEBEMAIL:-redislock@localhost}>
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
dpkg-deb --root-owner-group -Zxz --build "$root" "target/deb/${pkg}_${version}_${arch}.deb" >/dev/null
echo "target/deb/${pkg}_${version}_${arch}.deb"
