# Helpers shared by scripts/setup.sh (npm start's set-up) and
# scripts/test-services.sh (npm test's). Source it; it defines functions only.
# The caller sets LOG_PREFIX (e.g. "scour setup") and may set SUDO_FLAGS
# (default "-n": never wait for a password; test-services lets sudo ask).

: "${LOG_PREFIX:=scour}"
: "${SUDO_FLAGS=-n}"
# Bounds on apt (seconds): a stuck mirror or lock never hangs a start for ever.
: "${SCOUR_APT_TIMEOUT:=900}"

say() { echo "$LOG_PREFIX: $*"; }
warn() { echo "$LOG_PREFIX: $*" >&2; }

# True when this process may run commands as root: it is root, or sudo works
# without a password (sudo -n). Fast: no prompt, no apt call.
can_root() {
  [ "$(id -u)" = "0" ] && return 0
  command -v sudo >/dev/null 2>&1 || return 1
  # shellcheck disable=SC2086
  sudo $SUDO_FLAGS true >/dev/null 2>&1
}

as_root() {
  if [ "$(id -u)" = "0" ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    sudo $SUDO_FLAGS "$@"
  else
    warn "need root (or sudo) to run: $*"; return 1
  fi
}

# apt_install PKG...: quiet, bounded, waits up to 2 min for another apt's
# lock; runs `apt-get update` only when the first attempt fails (stale or
# empty package lists). Non-zero when the packages could not be installed.
apt_install() {
  command -v apt-get >/dev/null 2>&1 || { warn "apt-get not found (not Debian/Ubuntu)"; return 1; }
  local apt=(env DEBIAN_FRONTEND=noninteractive timeout "$SCOUR_APT_TIMEOUT" apt-get -q -y -o DPkg::Lock::Timeout=120)
  as_root "${apt[@]}" install "$@" >/dev/null 2>&1 && return 0
  as_root "${apt[@]}" update >/dev/null 2>&1 || return 1
  as_root "${apt[@]}" install "$@" >/dev/null 2>&1
}

wait_for() { # seconds, command...
  local n=$1; shift
  for _ in $(seq 1 "$((n * 4))"); do "$@" && return 0; sleep 0.25; done
  return 1
}

# The Chromium render_js uses (SCOUR_CHROMIUM_PATH, default Debian's).
# SCOUR_SETUP_DEBIAN_CHROMIUM is where Debian's package puts it (tests override it).
chromium_path() { echo "${SCOUR_CHROMIUM_PATH:-/usr/bin/chromium}"; }
debian_chromium() { echo "${SCOUR_SETUP_DEBIAN_CHROMIUM:-/usr/bin/chromium}"; }
chromium_version() { "$1" --version 2>/dev/null | head -1; }

# The exact command that fixes a missing Chromium, for messages.
chromium_fix() {
  local path; path=$(chromium_path)
  if [ "$path" != "$(debian_chromium)" ]; then
    echo "point SCOUR_CHROMIUM_PATH at a Chromium binary, or unset it and run: sudo apt-get install -y chromium"
  elif [ "$(id -u)" = "0" ]; then echo "apt-get install -y chromium"
  else echo "sudo apt-get install -y chromium"; fi
}

# ensure_chromium: makes the configured Chromium present, installing Debian's
# `chromium` when it is the one configured, missing, and this process may
# install. Returns 0 when present (no apt call then), 1 otherwise, having
# said why on stderr.
ensure_chromium() {
  local path; path=$(chromium_path)
  [ -x "$path" ] && return 0
  if [ "$path" != "$(debian_chromium)" ]; then
    warn "Chromium (render_js) is not executable at SCOUR_CHROMIUM_PATH=$path: $(chromium_fix)"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    warn "Chromium (render_js) is not installed at $path and there is no apt-get here: install Chromium and set SCOUR_CHROMIUM_PATH to it"
    return 1
  fi
  if ! can_root; then
    warn "Chromium (render_js) is not installed at $path and this user cannot install it (not root, no passwordless sudo); run: sudo apt-get install -y chromium"
    return 1
  fi
  local t0=$SECONDS
  say "installing Debian's chromium (for render_js; one time, about a minute)"
  # Without recommends: 25 packages instead of 125 (no desktop extras); fonts come with fontconfig.
  if apt_install --no-install-recommends chromium && [ -x "$path" ]; then
    say "Chromium installed in $((SECONDS - t0)) s ($(chromium_version "$path"))"
    return 0
  fi
  warn "could not install Chromium (render_js) from Debian's packages (no package source reachable?); run: $(chromium_fix)"
  return 1
}
