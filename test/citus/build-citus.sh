#!/usr/bin/env bash
# Builds Citus from its release tarball against Debian's PostgreSQL 15 once, into a cache keyed
# by the tarball's checksum and the PostgreSQL version, then installs the cached files into
# PostgreSQL's own directories (the server only loads extensions from there).
# Usage: build-citus.sh [tarball]; prints the cache directory on success.
set -euo pipefail
TARBALL=${1:-${CITUS_TARBALL:-$(dirname "$0")/../../../shared/vendor/citus-13.2.2.tar.gz}}
CACHE_ROOT=${CITUS_CACHE:-/var/cache/spaceport}
PACKAGES=(postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev)

# Citus 13.2.2's release tarball: its checksum's first 16 digits name its cache, so a machine that
# built it once runs the tests without the tarball beside every clone (a CI clone in a temporary
# folder has none).
RELEASE_SHA=c8fc76dc8294636a
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
missing=()
for package in "${PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "citus: needs ${missing[*]} (root with apt-get installs them)" >&2; exit 3; }
  echo "citus: installing ${missing[*]} with apt-get (once)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

pg_version=$("$PG_CONFIG" --version | awk '{print $2}')
if [ -f "$TARBALL" ]; then
  sha=$(sha256sum "$TARBALL" | cut -c1-16)
elif [ -f "$CACHE_ROOT/citus-$RELEASE_SHA-pg$pg_version/.built" ]; then
  sha=$RELEASE_SHA
else
  echo "citus: no tarball at $TARBALL, and no build of it cached in $CACHE_ROOT" >&2
  exit 3
fi
cache="$CACHE_ROOT/citus-$sha-pg$pg_version"

if [ ! -f "$cache/.built" ]; then
  echo "citus: building into $cache (about 3 minutes on 2 cores, once)" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tar xzf "$TARBALL" -C "$work" --strip-components=1
  # PostgreSQL 15.14+ declares have_createdb_privilege in commands/dbcommands.h; Citus 13.2.2
  # defines a static one of its own, which then no longer compiles: drop it where declared.
  if grep -q have_createdb_privilege "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h"; then
    perl -0pi -e 's/static inline bool\s*\nhave_createdb_privilege\(void\)\s*\n\{.*?\n\}\n//s' \
      "$work/src/include/pg_version_compat.h"
    sed -i 's|#include "miscadmin.h"|#include "miscadmin.h"\n#include "commands/dbcommands.h"|' \
      "$work/src/include/pg_version_compat.h"
  fi
  (cd "$work" && ./configure PG_CONFIG="$PG_CONFIG" >/dev/null \
    && make -s -j"$(nproc)" >/dev/null && make -s install DESTDIR="$work/root" >/dev/null)
  rm -rf "$cache" && mkdir -p "$cache" && cp -a "$work/root/." "$cache/"
  touch "$cache/.built"
fi

# Installing is a copy of the cached files (seconds).
if ! cmp -s "$cache/.built" "$("$PG_CONFIG" --pkglibdir)/.citus-installed-$sha" 2>/dev/null; then
  cp -a "$cache/usr/." /usr/
  cp "$cache/.built" "$("$PG_CONFIG" --pkglibdir)/.citus-installed-$sha"
fi
echo "$cache"
