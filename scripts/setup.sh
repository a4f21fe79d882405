#!/usr/bin/env bash
# npm start's set-up (the `prestart` script, before the build): brings what
# the main job needs that npm cannot, today Debian's Chromium for render_js.
# Installs it when it is missing and this process may (root, or sudo without
# a password); otherwise says so in one line with the command to run. Never
# fails the start: the server starts anyway and render_js answers 503 until
# Chromium is there. Quick and silent when everything is present (no apt
# call). SCOUR_SETUP=skip turns it off. `npx scour doctor` checks it all.
set -uo pipefail
[ "${SCOUR_SETUP:-}" = "skip" ] && exit 0
LOG_PREFIX="scour setup"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_chromium || true
exit 0
