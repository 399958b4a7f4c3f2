#!/usr/bin/env bash
# Installs Debian's chromium and chromedriver for the browser test (tests/browser/), once, and a
# CJK font so the glossary's Chinese terms render in its screenshots.
# The test drives only these system binaries: no test tool may download a browser of its own.
# Without root it cannot install: it says what to run and carries on, so `make` still builds the
# book and grades the demo; only the browser test (in `make test`) then fails, saying why.
set -euo pipefail

if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver && -d /usr/share/fonts/truetype/wqy ]]; then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "The browser test needs Debian's chromium and chromedriver; as root, run:" >&2
    echo "  apt-get update && apt-get install -y chromium chromium-driver fonts-wqy-microhei" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium chromium-driver fonts-wqy-microhei
