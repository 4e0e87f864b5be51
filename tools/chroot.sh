#!/usr/bin/env bash
# Runs a command in a chroot of another Debian release (another PHP), made
# with debootstrap under target/chroot/<dist>/root once, then reused:
#   tools/chroot.sh trixie 'tools/deps.sh && make test-php'    # PHP 8.4
# Inside, a private mount namespace binds in the repository (at the same
# path), this user's Rust toolchain (~/.cargo, ~/.rustup) and, over the
# repository's target/, target/chroot/<dist>/target: the chroot builds its
# own extension, for its own PHP, and fetches its own frameworks' tests;
# the host's target/otlp-python (the tests' OTLP receiver package) is bound
# in over it.
# Services the packages bring are never started (policy-rc.d). Needs root.
set -euo pipefail
dist=${1:?which Debian release}
cmd=${2:?what to run}
repo=$(cd "$(dirname "$0")/.." && pwd)
base=$repo/target/chroot/$dist
root=$base/root
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}

if [ "$(id -u)" -ne 0 ]; then
  echo "tools/chroot.sh needs root (debootstrap, chroot, mounts)" >&2
  exit 1
fi
if [ ! -e "$base/.complete" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  rm -rf "$base" && mkdir -p "$root"
  echo "debootstrap $dist into $root"
  debootstrap --variant=minbase --include=ca-certificates,make,gcc,libc6-dev,git,procps,sudo \
    "$dist" "$root" http://deb.debian.org/debian >"$base/debootstrap.log" 2>&1 \
    || { tail -20 "$base/debootstrap.log" >&2; exit 1; }
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  touch "$base/.complete"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$base/target"

unshare --mount --fork bash -c '
  set -e
  root=$1 repo=$2 target=$3 cargo_home=$4 rustup_home=$5 cmd=$6
  mount --make-rprivate /
  # The root a mount point, so that unshare works inside too (InstallTest).
  mount --bind "$root" "$root"
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount -t tmpfs tmpfs "$root/tmp"
  # After /tmp: a repository under /tmp (a CI clone) lands on the tmpfs.
  for d in "$repo" "$cargo_home" "$rustup_home"; do
    mkdir -p "$root/$d"
    mount --bind "$d" "$root/$d"
  done
  mount --bind "$target" "$root/$repo/target"
  # The Python package the OTLP receiver of the tests needs, as the host
  # installed it (tools/deps.sh): the chroot may not reach PyPI over TLS
  # (its CA store is the one Debian ships, not the one of the host), and the
  # package (pure Python, an abi3 protobuf) runs on either Python.
  if [ -d "$repo/target/otlp-python" ]; then
    mkdir -p "$root/$repo/target/otlp-python"
    mount --bind "$repo/target/otlp-python" "$root/$repo/target/otlp-python"
  fi
  # Chromium starts here, but chromedriver cannot reach its renderer: the
  # browser tests run on the host only (REDISLOCK_BROWSER=0 skips them), and
  # so do the network namespace tests (REDISLOCK_NETNS=0: the chroot has no
  # /run/netns of its own; they test the extension, not the release PHP).
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 CI="${CI:-}" REDISLOCK_BROWSER=0 REDISLOCK_NETNS=0 FRAMEWORK_SUITES=optional \
    CARGO_HOME="$cargo_home" RUSTUP_HOME="$rustup_home" \
    PATH="$cargo_home/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    bash -c "cd \"\$0\" && $cmd" "$repo"
' chroot "$root" "$repo" "$base/target" "$cargo_home" "$rustup_home" "$cmd"
