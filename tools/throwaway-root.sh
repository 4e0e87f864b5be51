#!/usr/bin/env bash
# Runs a shell command as root in a throwaway copy of this machine's root:
# an overlay of / (writes go to a tmpfs) in a private mount namespace, with
# the repository, the Rust toolchain, /dev, /proc and /tmp bound in. Installing packages or
# files there leaves the machine as it was. Exit 77: this machine cannot
# (not root, no mount namespaces or overlayfs), so callers skip.
#   tools/throwaway-root.sh 'make install && php -m'
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "a throwaway root needs root and unshare" >&2
  exit 77
fi
# Bound in like the repository: the Rust toolchain, where it is a mount of
# its own (tools/chroot.sh) the overlay of / would not show it.
binds=("$repo")
for d in "${CARGO_HOME:-$HOME/.cargo}" "${RUSTUP_HOME:-$HOME/.rustup}"; do
  if [ -d "$d" ]; then binds+=("$(cd "$d" && pwd)"); fi
done
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
unshare --mount --fork bash -c '
  set -e
  base=$1 repo=$2 cmd=$3
  shift 3
  mount --make-rprivate /
  mount -t tmpfs tmpfs "$base" && mkdir -p "$base/up" "$base/work" "$base/root" || exit 77
  mount -t overlay overlay -o "lowerdir=/,upperdir=$base/up,workdir=$base/work" "$base/root" 2>/dev/null || { echo "overlayfs refused" >&2; exit 77; }
  for d in dev proc tmp; do
    mkdir -p "$base/root/$d"
  done
  mount --rbind /dev "$base/root/dev"
  mount -t proc proc "$base/root/proc"
  mount --bind /tmp "$base/root/tmp"
  for d in "$@"; do
    mkdir -p "$base/root/$d"
    mount --rbind "$d" "$base/root/$d"
  done
  cd /
  exec chroot "$base/root" /usr/bin/env -C "$repo" bash -c "$cmd"
' throwaway-root "$base" "$repo" "$1" "${binds[@]}"
