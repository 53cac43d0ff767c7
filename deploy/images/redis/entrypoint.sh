#!/bin/sh
# The official image's contract: `redis-server [options]` runs as redis in /data, with
# protected mode off unless a configuration file is given (the first option).
set -eu
if [ "${1:-}" = redis-server ]; then
  case "${2:-}" in
    *.conf) ;;
    *)
      shift
      set -- redis-server --protected-mode no "$@"
      ;;
  esac
  if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis /data 2>/dev/null || true
    exec setpriv --reuid redis --regid redis --init-groups "$@"
  fi
fi
exec "$@"
