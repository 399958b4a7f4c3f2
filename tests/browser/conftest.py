"""Fixtures of the browser test: the built site served on localhost, and one headless Chromium.

The browser is Debian's chromium driven through Debian's chromedriver (scripts/install_browser.sh
installs both); the test never lets a tool download a browser or driver of its own.
"""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from browser_site import (
    CHROMEDRIVER,
    CHROMIUM,
    CHROMIUM_FLAGS,
    HTML,
    PAGE_TIMEOUT_S,
    WINDOW,
    Fetcher,
    Site,
)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def base_url():
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML} has no built book: run `make book` first")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def driver(tmp_path_factory):
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        pytest.fail(
            f"missing {', '.join(missing)}: run scripts/install_browser.sh as root "
            "(apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager (which may download drivers) is never run.
    service = Service(executable_path=str(CHROMEDRIVER))
    browser = webdriver.Chrome(service=service, options=options)
    browser.set_page_load_timeout(PAGE_TIMEOUT_S)
    browser.set_script_timeout(PAGE_TIMEOUT_S)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="session")
def site(base_url, driver) -> Site:
    return Site(base_url, driver)


@pytest.fixture(scope="session")
def fetcher() -> Fetcher:
    return Fetcher()
