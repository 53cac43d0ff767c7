#!/usr/bin/env bash
# Base images built from Debian's own packages, for machines that reach Debian's mirror and
# PyPI but no image registry. Each image is tagged with a hash of its recipe (the files that
# make it, and its parent's tag), so it is built once per machine and never again while the
# recipe is unchanged; a stable alias tag points at the current build.
#
#   deploy/images/build.sh            build what is missing, print "NAME=TAG" lines
#   deploy/images/build.sh --check    print the tags, exit 1 if any image is missing
#
# Images (alias -> what it stands in for):
#   benchforge-local/bookworm:latest   a Debian bookworm root file system with python3
#                                      (debootstrap --variant=minbase; the docker sandbox's image)
#   benchforge-local/python:3.11-slim-bookworm   the official python:3.11-slim-bookworm, for
#                                      the Dockerfile's PYTHON_IMAGE build argument
#   benchforge-local/postgres:15       postgres:15 (POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD,
#                                      PGDATA, pg_isready), from Debian's postgresql-15
#   benchforge-local/redis:7           redis:7 (redis-server as the command, /data), from
#                                      Debian's redis-server
#
# Builds that install packages run with the host's network (`--network host`): the engine may
# run without a bridge or NAT of its own. PyPI is reached through the host's CA bundle
# (SSL_CERT_FILE or /etc/ssl/certs/ca-certificates.crt), copied into the python image, so that
# pip inside a build trusts what pip on the host trusts.
set -euo pipefail
cd "$(dirname "$0")"
here=$(pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
check=0
[ "${1:-}" = --check ] && check=1
export DOCKER_BUILDKIT=0 # the classic builder: no buildx plugin needed

recipe_hash() { cat "$@" | sha256sum | cut -c1-12; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
missing=0

# 1. The root file system: debootstrap into a scratch folder, then docker import.
rootfs_tag="benchforge-local/bookworm:$(printf '%s\n' "$suite $mirror minbase python3" |
  cat - build.sh | sha256sum | cut -c1-12)"
if ! have "$rootfs_tag"; then
  if [ $check = 1 ]; then
    missing=1
  else
    echo "images: building $rootfs_tag (debootstrap from $mirror, a few minutes)" >&2
    scratch=$(mktemp -d /var/tmp/benchforge-rootfs.XXXXXX)
    trap 'rm -rf "$scratch"' EXIT
    debootstrap --variant=minbase --include=python3 "$suite" "$scratch/root" "$mirror" >"$scratch/log" 2>&1 || {
      tail -20 "$scratch/log" >&2
      echo "images: debootstrap failed (log above)" >&2
      exit 1
    }
    rm -rf "$scratch"/root/var/cache/apt/archives/*.deb "$scratch"/root/var/lib/apt/lists/*
    tar -C "$scratch/root" -c . | docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV LANG=C.UTF-8' \
      --change 'CMD ["python3"]' - "$rootfs_tag" >/dev/null
    rm -rf "$scratch"
    trap - EXIT
  fi
fi
[ $check = 1 ] || docker tag "$rootfs_tag" benchforge-local/bookworm:latest
echo "BOOKWORM_IMAGE=$rootfs_tag"

# 2. Images built FROM the root file system with a Dockerfile of their own.
ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
derived() { # name alias
  local name=$1 alias=$2 tag context
  local files=("$name"/*)
  if [ "$name" = python ]; then
    tag="benchforge-local/$name:$(printf '%s\n' "$rootfs_tag" | cat - "${files[@]}" "$ca" | sha256sum | cut -c1-12)"
  else
    tag="benchforge-local/$name:$(printf '%s\n' "$rootfs_tag" | cat - "${files[@]}" | sha256sum | cut -c1-12)"
  fi
  if ! have "$tag"; then
    if [ $check = 1 ]; then
      missing=1
    else
      echo "images: building $tag" >&2
      context=$(mktemp -d)
      cp -r "$name"/. "$context"/
      if [ "$name" = python ]; then cp "$ca" "$context/host-ca-bundle.crt"; fi
      docker build -q --network host --build-arg "BASE=$rootfs_tag" -t "$tag" "$context" >/dev/null || {
        rm -rf "$context"
        echo "images: building $tag failed" >&2
        exit 1
      }
      rm -rf "$context"
    fi
  fi
  [ $check = 1 ] || docker tag "$tag" "$alias"
  echo "$(echo "$name" | tr a-z A-Z)_IMAGE=$tag"
}
derived python benchforge-local/python:3.11-slim-bookworm
derived postgres benchforge-local/postgres:15
derived redis benchforge-local/redis:7
exit $missing
