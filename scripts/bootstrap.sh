#!/usr/bin/env bash
# The one bootstrap step behind `make demo`, `make test` and `.ci/run`.
#
#   scripts/bootstrap.sh demo   the sandbox (bubblewrap) must be there
#   scripts/bootstrap.sh test   the sandbox, Chromium, a Docker engine with Compose v2
#                               and the base images of deploy/images/build.sh, and
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
  # The engine (dockerd) and debootstrap, which builds the base images from Debian's packages
  # where no image registry answers (deploy/images/build.sh).
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
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

docker_up() { docker info >/dev/null 2>&1; }
pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }
wait_for() {
  for _ in $(seq "${2:-30}"); do
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

# The Docker engine, for the compose stack's rehearsal and the docker sandbox backend. Started
# here when it is installed but not running: without iptables rules, IP forwarding or a
# default bridge of its own (containers reach only what shares a network with them; compose
# makes its own networks), its state in /var/lib/docker, its log in /var/log/benchforge-dockerd.log.
if ! docker_up; then
  start="dockerd --iptables=false --ip-forward=false --bridge=none"
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: the Docker engine is not running; start it as root: $start" >&2
    exit 1
  fi
  if [ "$dry" = 1 ]; then
    echo "bootstrap: would run: $start"
  else
    echo "bootstrap: starting the Docker engine"
    # Frames between two containers of one bridge pass the host's iptables FORWARD chain when
    # br_netfilter is loaded; a host whose FORWARD policy is DROP (one where an engine once set
    # its own rules) would then cut them. This engine sets no rules: bridged frames are not
    # filtered.
    for knob in /proc/sys/net/bridge/bridge-nf-call-iptables /proc/sys/net/bridge/bridge-nf-call-ip6tables; do
      if [ -w "$knob" ]; then echo 0 >"$knob"; fi
    done
    setsid $start >>/var/log/benchforge-dockerd.log 2>&1 </dev/null &
    wait_for docker_up 60 || {
      echo "bootstrap: the Docker engine did not answer after: $start (see /var/log/benchforge-dockerd.log)" >&2
      exit 1
    }
  fi
fi

# Compose v2 (`docker compose`): the compose file's sandbox worker needs
# `security_opt: systempaths=unconfined`, which Compose v1 (bookworm's docker-compose 1.29)
# cannot pass to the engine. Debian ships Compose v2 from trixie on (docker-compose 2.26, one
# static binary needing libc6 >= 2.34): on bookworm its package is fetched from Debian's trixie
# suite with a private package list (the system's sources are left as they are) and installed.
compose_v2() { docker compose version 2>/dev/null | grep -Eq "version v?2\."; }
if ! compose_v2; then
  if [ "$(id -u)" != 0 ]; then
    echo "bootstrap: Docker Compose v2 ('docker compose') is missing; install Debian's docker-compose 2.x (trixie) as root" >&2
    exit 1
  fi
  if [ "$dry" = 1 ]; then
    echo "bootstrap: would install Compose v2: Debian trixie's docker-compose"
  else
    echo "bootstrap: installing Compose v2 (Debian trixie's docker-compose)"
    apt_dir=$(mktemp -d /var/tmp/benchforge-apt.XXXXXX)
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${DEBIAN_MIRROR:-http://deb.debian.org/debian} trixie main" >"$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
      -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::archives=$apt_dir/archives"
      -o APT::Sandbox::User=root)
    apt-get "${apt_opts[@]}" update -qq
    (cd "$apt_dir" && apt-get "${apt_opts[@]}" download -qq docker-compose)
    dpkg -i "$apt_dir"/docker-compose_2*.deb >/dev/null
    rm -rf "$apt_dir"
    compose_v2 || {
      echo "bootstrap: 'docker compose version' does not answer v2 after installing Debian's docker-compose" >&2
      exit 1
    }
  fi
fi

# Base images from Debian's packages, built once per machine (cached by their recipe's hash).
images="$(dirname "$0")/../deploy/images/build.sh"
if [ "$dry" = 1 ]; then
  if ! bash "$images" --check >/dev/null 2>&1; then
    echo "bootstrap: would run: deploy/images/build.sh"
  fi
else
  bash "$images" >/dev/null
fi
