"""The files of Rerun's web viewer (its page, JavaScript and WebAssembly), which the
``rerun-sdk`` wheel carries inside its binaries and no Python API hands out.

They are taken once from the ``rerun`` program of the same wheel, serving them for a moment on
loopback only (``--bind 127.0.0.1``), and kept in the user's cache
(``$XDG_CACHE_HOME/uvms_sim/rerun-web-viewer-<version>``, else ``~/.cache``; a manifest of
sizes and SHA-256 sums guards it) so that later starts read them from disk. The browser view's
own front (``viz.web_front``) serves them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from .web_front import Asset, ServeError

# what Rerun's web-viewer server answers (rerun-sdk 0.41), and their media types
FILES = {
    "/index.html": "text/html",
    "/re_viewer.js": "text/javascript",
    "/re_viewer_bg.wasm": "application/wasm",
    "/sw.js": "text/javascript",
    "/favicon.ico": "image/x-icon",
    "/apple-touch-icon.png": "image/png",
    "/signed-in": "text/html",
    "/signed-out": "text/html",
}
START_TIMEOUT = 60.0  # s: for the rerun program to serve its files
HOSTING = re.compile(r"Hosting a web-viewer at http://127\.0\.0\.1:(\d+)")


def rerun_version() -> str:
    from importlib.metadata import version

    return version("rerun-sdk")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "uvms_sim" / f"rerun-web-viewer-{rerun_version()}"


def rerun_program() -> Path:
    """The ``rerun`` program of the installed rerun-sdk wheel (``RERUN_CLI_PATH`` overrides it,
    as for the wheel's own ``rerun`` command)."""
    if "RERUN_CLI_PATH" in os.environ:
        return Path(os.environ["RERUN_CLI_PATH"])
    import rerun_cli

    return Path(rerun_cli.__file__).parent / ("rerun.exe" if sys.platform.startswith("win") else "rerun")


def viewer_assets() -> dict[str, Asset]:
    """The web viewer's files by path (``/index.html``, ...), from the cache or else from the
    rerun program (then cached); ServeError if neither can give them."""
    folder = cache_dir()
    assets = read_cache(folder)
    if assets is None:
        assets = from_rerun_program()
        write_cache(folder, assets)
    return assets


def read_cache(folder: Path) -> dict[str, Asset] | None:
    """The files kept in ``folder``, or None when it is missing, incomplete or altered."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
        assets = {}
        for path, media in FILES.items():
            body = (folder / path.lstrip("/")).read_bytes()
            if hashlib.sha256(body).hexdigest() != manifest[path]:
                return None
            assets[path] = Asset(body, media)
        return assets
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_cache(folder: Path, assets: dict[str, Asset]) -> None:
    """Keep ``assets`` in ``folder`` (written beside it, then renamed into place); a cache that
    cannot be written is skipped: the files are taken from the rerun program again next time."""
    tmp = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
        for path, asset in assets.items():
            (tmp / path.lstrip("/")).write_bytes(asset.body)
        manifest = {path: hashlib.sha256(a.body).hexdigest() for path, a in assets.items()}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    except OSError:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def from_rerun_program() -> dict[str, Asset]:
    """Start the rerun program serving only its web viewer on 127.0.0.1 (a port the system
    picks), read every file from it, and stop it."""
    program = rerun_program()
    if not program.is_file():
        raise ServeError(f"browser view: Rerun's program is missing at {program} (reinstall rerun-sdk)")
    cmd = [str(program), "--serve-web", "--bind", "127.0.0.1", "--web-viewer-port", "0"]
    cmd += ["rerun+http://127.0.0.1:9/proxy"]  # a stream address: the program serves the page only
    env = {**os.environ, "RUST_LOG": "info", "NO_COLOR": "1"}
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        try:
            port = _wait_for_port(proc, log)
            assets = {}
            for path, media in FILES.items():
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
                    assets[path] = Asset(r.read(), media)
            return assets
        except OSError as exc:
            raise ServeError(f"browser view: could not read the web viewer from {program}: {exc}") from None
        finally:
            proc.terminate()
            try:
                proc.wait(5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_for_port(proc: subprocess.Popen, log) -> int:
    end = time.monotonic() + START_TIMEOUT
    while time.monotonic() < end:
        log.seek(0)
        found = HOSTING.search(log.read().decode("utf-8", "replace"))
        if found:
            return int(found.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    log.seek(0)
    tail = log.read().decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    raise ServeError(f"browser view: Rerun's program did not serve its web viewer: {tail[0]}")
