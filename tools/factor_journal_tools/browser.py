"""Headless Chromium for the browser tests and the pages bench: the system's ``chromium`` and ``chromedriver``
(``apt-get install chromium chromium-driver``), never a downloaded browser."""

from __future__ import annotations

import shutil
import socket
import time

import httpx

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-dev-shm-usage",
)


def headless_chromium(width: int = 1280, height: int = 1000):
    """A new headless Chromium driver with a window of ``width`` x ``height``; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")  # type: ignore[assignment]
    for flag in (*FLAGS, f"--window-size={width},{height}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def free_port() -> int:
    """A local TCP port free at the moment of asking, for a server the tests or the benchmarks start."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(url: str, seconds: float = 60) -> bool:
    """True once the Streamlit server at ``url`` answers its health check, False if it has not within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            time.sleep(0.3)
    return False
