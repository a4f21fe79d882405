#!/usr/bin/env bash
# Brings up what the test suites need: Debian's Chromium (/usr/bin/chromium,
# for render_js, screenshots and PDF exports), pdftotext (poppler-utils: the
# research export tests read the PDFs they print), and on loopback
# PostgreSQL (5432, the `postgres` role reachable without a password from
# 127.0.0.1) and Redis (6379). Starts them when they are installed but
# stopped; installs them from Debian's packages when they are missing. Fails
# (exit 1) when one cannot be brought up: the suites never skip a real
# component.
set -euo pipefail
LOG_PREFIX=test-services
SUDO_FLAGS="" # unlike npm start, npm test may ask for a sudo password
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # as_root, apt_install, wait_for, ensure_chromium (shared with setup.sh)
install_pkgs() { say "installing $* from Debian's packages"; apt_install "$@"; }

CHROMIUM=$(chromium_path)
ensure_chromium || { warn "$CHROMIUM is missing and could not be installed" ; exit 1; }
say "Chromium ready ($(chromium_version "$CHROMIUM"))"

if ! command -v pdftotext >/dev/null 2>&1; then
  install_pkgs poppler-utils || true
  command -v pdftotext >/dev/null 2>&1 || { warn "pdftotext is missing and could not be installed; run: sudo apt-get install -y poppler-utils"; exit 1; }
fi
say "pdftotext ready ($(pdftotext -v 2>&1 | head -1))"

PG_URL="${SCOUR_TEST_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
pg_ok() { psql "$PG_URL" -Atqc 'select 1' >/dev/null 2>&1; }
pg_listening() { pg_isready -h 127.0.0.1 -p 5432 -q >/dev/null 2>&1; }

if ! pg_ok; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then install_pkgs postgresql postgresql-client; fi
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1)
  if [ -z "$version" ]; then echo "test-services: PostgreSQL is installed but has no cluster in /etc/postgresql" >&2; exit 1; fi
  if ! pg_listening; then
    echo "test-services: starting PostgreSQL $version"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    wait_for 30 pg_listening || { echo "test-services: PostgreSQL did not start" >&2; exit 1; }
  fi
  if ! pg_ok; then
    # A fresh Debian cluster asks for a password on TCP: let the local test role in from loopback only.
    hba="/etc/postgresql/$version/main/pg_hba.conf"
    if ! as_root grep -q '# scour-tests' "$hba"; then
      echo "test-services: allowing the postgres role from 127.0.0.1 without a password (test machines only) in $hba"
      as_root sed -i '1i host all postgres 127.0.0.1/32 trust # scour-tests\nhost all postgres ::1/128 trust # scour-tests' "$hba"
      as_root pg_ctlcluster --skip-systemctl-redirect "$version" main reload
    fi
    wait_for 10 pg_ok || { echo "test-services: cannot connect to $PG_URL" >&2; exit 1; }
  fi
fi
echo "test-services: PostgreSQL ready ($(psql "$PG_URL" -Atqc 'show server_version'))"

REDIS_HOST=127.0.0.1
redis_ok() { [ "$(redis-cli -h "$REDIS_HOST" -p 6379 ping 2>/dev/null)" = "PONG" ]; }
if ! redis_ok; then
  if ! command -v redis-server >/dev/null 2>&1; then install_pkgs redis-server redis-tools; fi
  echo "test-services: starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for 15 redis_ok || { echo "test-services: Redis did not start" >&2; exit 1; }
fi
echo "test-services: Redis ready ($(redis-cli -h "$REDIS_HOST" -p 6379 info server | grep -m1 redis_version | tr -d '\r'))"
