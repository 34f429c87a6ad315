#!/usr/bin/env bash
# Builds PgBouncer 1.24.1 once, from the source Debian's own package of it is built from (Debian 13's
# `pgbouncer`; Debian 12's is 1.18, which keeps no prepared statement in transaction mode), into a
# cache; prints the path of its `pgbouncer` binary. Exit 3: it cannot be had here (not root, no network).
set -euo pipefail
VERSION=1.24.1
SOURCE_URL=http://deb.debian.org/debian/pool/main/p/pgbouncer/pgbouncer_$VERSION.orig.tar.gz
SOURCE_SHA256=da72a3aba13072876d055a3e58dd4aba4a5de4ed6148e73033185245598fd3e0
CACHE=${PGBOUNCER_CACHE:-/var/cache/spaceport}/pgbouncer-$VERSION
PACKAGES=(libevent-dev libssl-dev pkg-config make gcc curl)

if [ -f "$CACHE/.built" ]; then echo "$CACHE/bin/pgbouncer"; exit 0; fi
[ "$(id -u)" = 0 ] || { echo "pgbouncer $VERSION: not built yet in $CACHE, and building it needs root (apt-get, $CACHE)" >&2; exit 3; }

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pgbouncer $VERSION: installing ${missing[*]} with apt-get (once)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "pgbouncer $VERSION: building into $CACHE (about 20 seconds on 2 cores, once)" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsS --max-time 120 -o "$work/source.tar.gz" "$SOURCE_URL" || { echo "pgbouncer $VERSION: $SOURCE_URL could not be fetched" >&2; exit 3; }
echo "$SOURCE_SHA256  $work/source.tar.gz" | sha256sum -c --quiet
mkdir "$work/src" && tar xzf "$work/source.tar.gz" -C "$work/src" --strip-components=1
(cd "$work/src" && ./configure --prefix="$work/root" --without-cares --without-pam --without-systemd >/dev/null \
  && make -s -j"$(nproc)" >/dev/null && make -s install >/dev/null)
rm -rf "$CACHE" && mkdir -p "$CACHE/bin" && cp "$work/root/bin/pgbouncer" "$CACHE/bin/"
# Run as the `pgbouncer` account when started by root: the binary must be reachable by it.
chmod 755 "$CACHE" "$CACHE/bin" "$CACHE/bin/pgbouncer"
touch "$CACHE/.built"
echo "$CACHE/bin/pgbouncer"
