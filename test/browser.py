"""Debian's Chromium, headless, driven by selenium: the browser view's test and its benchmark
open the page the same way."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# headless, software WebGL (no GPU here), and none of the background connections that this
# machine's closed network refuses
FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,800",
)  # fmt: skip


def headless_chromium(page: str, profile: Path | None = None):
    """A selenium driver of a headless Chromium showing ``page`` (a new profile in ``profile``,
    if given); the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM and DRIVER, "Debian's chromium and chromium-driver are needed: make browser (as root)"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (*FLAGS, *([f"--user-data-dir={profile}"] if profile else [])):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.get(page)
    return driver
