#!/usr/bin/env bash
# The one bootstrap step behind `make demo`, `make test` and `.ci/run`.
#
#   scripts/bootstrap.sh demo   the sandbox (bubblewrap) must be there
#   scripts/bootstrap.sh test   the sandbox, Chromium and docker-compose, and
#                               PostgreSQL and Redis answering on 127.0.0.1
#
# Missing system packages are installed with apt when running as root; as any
# other user it stops before doing anything, with one message that names the
# exact command to run. Services that are installed but stopped are started.
# BENCHFORGE_BOOTSTRAP_DRY_RUN=1 prints what it would do and changes nothing.
set -euo pipefail

target=${1:-}
case "$target" in
  demo | test) ;;
  *)
    echo "usage: scripts/bootstrap.sh demo|test" >&2
    exit 2
    ;;
esac
dry=${BENCHFORGE_BOOTSTRAP_DRY_RUN:-0}

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
# The sandbox runs Debian's own interpreter (SANDBOX_PYTHON), not a virtualenv's.
[ -x "${SANDBOX_PYTHON:-/usr/bin/python3}" ] || need+=(python3)
if [ "$target" = test ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
fi

if [ ${#need[@]} -gt 0 ]; then
  cmd="apt-get update && apt-get install -y ${need[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: missing system packages for 'make $target': ${need[*]}." >&2
    echo "bootstrap: run as root, then run 'make $target' again:  sudo sh -c '$cmd'" >&2
    exit 1
  fi
  if [ "$dry" = 1 ]; then
    echo "bootstrap: would run: $cmd"
  else
    echo "bootstrap: installing ${need[*]} (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi

if [ "$target" = demo ]; then
  exit 0
fi

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }
wait_for() {
  for _ in $(seq 30); do
    "$1" && return 0
    sleep 1
  done
  return 1
}

if ! pg_up; then
  if [ -d /etc/postgresql ] && command -v pg_ctlcluster >/dev/null 2>&1; then
    start="pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | head -n1) main start"
    if [ "$dry" = 1 ]; then
      echo "bootstrap: would run: $start"
    else
      echo "bootstrap: starting PostgreSQL"
      $start
      wait_for pg_up || {
        echo "bootstrap: PostgreSQL did not answer on 127.0.0.1:5432 after: $start" >&2
        exit 1
      }
    fi
  else
    echo "bootstrap: PostgreSQL is not installed; install it: apt-get install -y postgresql" >&2
    exit 1
  fi
fi

if ! redis_up; then
  if command -v redis-server >/dev/null 2>&1; then
    start='redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no'
    if [ "$dry" = 1 ]; then
      echo "bootstrap: would run: $start"
    else
      echo "bootstrap: starting Redis"
      redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
      wait_for redis_up || {
        echo "bootstrap: Redis did not answer on 127.0.0.1:6379 after: $start" >&2
        exit 1
      }
    fi
  else
    echo "bootstrap: Redis is not installed; install it: apt-get install -y redis-server" >&2
    exit 1
  fi
fi
