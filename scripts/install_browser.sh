#!/usr/bin/env bash
# Installs Debian's chromium and chromedriver for the browser test (tests/browser/), once.
# The test drives only these system binaries: no test tool may download a browser of its own.
# Without root it cannot install, so it says what to run and fails the set-up instead.
set -euo pipefail

if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "The browser test needs Debian's chromium and chromedriver; as root, run:" >&2
    echo "  apt-get update && apt-get install -y chromium chromium-driver" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium chromium-driver
