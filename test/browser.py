"""Debian's Chromium, headless, driven by selenium: the browser view's test and its benchmark
open the page the same way."""

from __future__ import annotations

import shutil
import time
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


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one protobuf message (varints and length-delimited
    fields; fixed-width ones are skipped)."""
    out: list[tuple[int, int | bytes]] = []
    i = 0

    def varint() -> int:
        nonlocal i
        value = shift = 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while i < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out.append((field, varint()))
        elif wire == 2:
            n = varint()
            out.append((field, data[i : i + n]))
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
    return out


def viewer_state(driver) -> tuple[bytes, float]:
    """The Rerun viewer's state in the page (``window._handle.viewer_state()``: Rerun's Viewer
    Control ``GetViewerStateResponse``, empty before the page has started the viewer) and the
    wall-clock time at which the page read it (s since the epoch, the page's ``Date.now()``: the
    same clock as ``time.time()`` here). The read waits for the page's main thread, which a
    software-rendered frame can hold for a second: the moment of the read, not of the call, is
    when the state was what it says."""
    at, raw = driver.execute_script(
        "return [Date.now(), window._handle ? Array.from(window._handle.viewer_state()) : null]"
    )
    return bytes(raw or []), at * 1e-3


def viewer_lag(driver, sample) -> tuple[float | None, float]:
    """How far the viewer is behind the simulation at the moment the page read its state, and
    how long the page took to answer (s): ``sample()`` gives (simulated time, ``time.time()``)
    of a paced simulation; taken before and after the query, they place the page's read in
    simulated time (linear in between). The lag is None before the viewer holds the ``sim``
    timeline. A page whose clock reads outside the two samples is not on this machine's clock:
    ValueError."""
    (s0, w0), asked = sample(), time.time()
    state, read = viewer_state(driver)
    s1, w1 = sample()
    if not w0 <= read <= w1:
        raise ValueError(f"the page's clock read {read:.3f} outside {w0:.3f}-{w1:.3f}")
    shown = viewer_time_ranges(driver, state).get("sim")
    if shown is None:
        return None, read - asked
    return s0 + (s1 - s0) * (read - w0) / max(w1 - w0, 1e-9) - shown[1] * 1e-9, read - asked


def viewer_time_ranges(driver, state: bytes | None = None) -> dict[str, tuple[int, int]]:
    """What the Rerun viewer in the page has taken in so far: each timeline of its recordings
    with the (first, last) time it holds (ns for temporal timelines), from the viewer's own
    state (``viewer_state``, or ``state`` read by it: recordings = 3, their timelines = 2, a
    timeline's name = 1.1 and range = 3 (start 1, end 2)). Empty before the page has started
    the viewer or received a recording."""
    raw = viewer_state(driver)[0] if state is None else state
    ranges: dict[str, tuple[int, int]] = {}
    for field, recording in _fields(raw):
        if field != 3 or not isinstance(recording, bytes):
            continue
        for f, timeline in _fields(recording):
            if f != 2 or not isinstance(timeline, bytes):
                continue
            parts = dict(_fields(timeline))
            name = dict(_fields(parts.get(1, b""))).get(1, b"")  # type: ignore[arg-type]
            span = dict(_fields(parts.get(3, b"")))  # type: ignore[arg-type]
            if isinstance(name, bytes) and name and 2 in span:
                ranges[name.decode()] = (int(span.get(1, 0)), int(span[2]))
    return ranges


def viewer_views(driver) -> list[tuple[str, str, bool]]:
    """The views of the page's current blueprint as (name, class, visible), from the same
    state (``GetViewerStateResponse.views`` = 5: name 3, class 2, visible 5)."""
    views = []
    for field, view in _fields(viewer_state(driver)[0]):
        if field == 5 and isinstance(view, bytes):
            parts = dict(_fields(view))
            name, kind = parts.get(3, b""), parts.get(2, b"")
            if isinstance(name, bytes) and isinstance(kind, bytes):
                views.append((name.decode(), kind.decode(), bool(parts.get(5, 0))))
    return views
