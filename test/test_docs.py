"""Every code block of README.md and docs/*.md runs as written (the conventions are in
docs/contributing.md):

- ``python`` blocks are run, each in a process of its own;
- ``yaml`` and ``xml`` blocks are parsed (and written to a file for the shell blocks after
  them when marked ``<!-- file: NAME -->``); ``text`` blocks are output shown, not code;
- shell blocks (indented, or fenced without a language, ``sh``, ``bash``) are run by bash in
  a folder that mirrors the repository (its files linked, ``../shared`` beside it), with the
  environment's commands first on PATH; blocks of ``make`` commands are dry-run by make
  (``make -n``: the targets exist and their recipes expand); a block marked
  ``<!-- until Ctrl-C -->`` must still be running, without an error, once it has printed its
  first line and some seconds after, and must end cleanly on Ctrl-C; ``<!-- given: NAME
  [NAME=REPOSITORY_PATH] ... -->`` puts small inputs of the kind each name says (a rosbag2
  folder, an ArduSub ``.BIN`` or ``.tlog``, a ``.csv.gz`` run, or the repository file after
  ``=``) under the names the block uses;
- a block marked ``<!-- not run: REASON -->`` is not run, and must give its reason.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import yaml
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = ("", "sh", "bash", "shell")
MARK = re.compile(r"<!--\s*(not run|file|given|until Ctrl-C)\s*(?::\s*(.*?))?\s*-->", re.S)
SERVE = 10.0  # s a server block must stay up after its first line of output
TIMEOUT = 900.0  # s for one block
ERROR = re.compile(r"(^|: )error:", re.M | re.I)  # the commands' one-line errors


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The code blocks of ``doc`` as a CommonMark parser finds them, each with the marks of the
    HTML comments right before it."""
    tokens = MarkdownIt("commonmark").parse(doc.read_text())
    found = []
    for i, token in enumerate(tokens):
        if token.type not in ("fence", "code_block") or token.map is None:
            continue
        marks: dict[str, str] = {}
        j = i - 1
        while j >= 0 and tokens[j].type == "html_block":
            for kind, value in MARK.findall(tokens[j].content):
                marks[kind] = value.strip()
            j -= 1
        lang = token.info.strip().split()[0] if token.info.strip() else ""
        found.append(Block(doc, token.map[0] + 1, lang, token.content, marks))
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]


def test_every_block_is_run_or_says_why_not():
    """Each block is of a kind the test runs, and a ``not run`` mark gives a reason."""
    assert len(ALL) > 25
    for b in ALL:
        assert b.lang in ("python", "yaml", "xml", "text", *SHELL), (
            f"{b.name}: a block of language {b.lang!r}"
        )
        if "not run" in b.marks:
            assert len(b.marks["not run"].split()) >= 3, f"{b.name}: `not run` needs a reason"


@pytest.mark.parametrize("block", ALL, ids=[b.name for b in ALL])
def test_doc_block(block: Block, tmp_path_factory):
    if "not run" in block.marks:
        pytest.skip(f"not run: {block.marks['not run']}")
    if block.lang == "text":
        return
    if block.lang == "yaml":
        assert yaml.safe_load(block.text) is not None, block.name
        return
    if block.lang == "xml":  # a fragment of a URDF: its elements side by side
        ET.fromstring(f"<fragment>{block.text}</fragment>")
        return
    work = workspace(block, tmp_path_factory)
    if block.lang == "python":
        script = work / f"block_{block.line}.py"
        script.write_text(block.text)
        run = subprocess.run([sys.executable, script.name], cwd=work, env=environment(), capture_output=True,
                             text=True, timeout=TIMEOUT, check=False)  # fmt: skip
        assert run.returncode == 0, f"{block.name}:\n{run.stdout}\n{run.stderr}"
        return
    if "../shared" in block.text and not (work.parent / "shared").is_dir():
        pytest.skip("../shared (the real tank runs) is not beside this checkout")
    commands = [ln for ln in block.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if all(c.split()[0] == "make" for c in commands):
        # a dry run, in the repository itself: the mirror leaves the package's folder out, which
        # the targets' prerequisites name
        for c in commands:
            run = subprocess.run(["make", "-n", *c.split()[1:]], cwd=ROOT, capture_output=True, text=True,
                                 timeout=120, check=False)  # fmt: skip
            assert run.returncode == 0, f"{block.name}: {c}:\n{run.stderr}"
        return
    script = "set -e -o pipefail\n" + block.text
    if "until Ctrl-C" in block.marks:
        serve(block, script, work)
        return
    run = subprocess.run(["bash", "-c", script], cwd=work, env=environment(), capture_output=True, text=True,
                         timeout=TIMEOUT, check=False)  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in output, f"{block.name}:\n{output}"


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def serve(block: Block, script: str, work: Path) -> None:
    """A block that runs until Ctrl-C: up, without an error, SERVE seconds after its first
    line of output; then SIGINT to its process group, and a clean end."""
    proc = subprocess.Popen(["bash", "-c", script], cwd=work, env=environment(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
    lines: list[str] = []
    first = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        first.wait(timeout=180.0)
        end = time.monotonic() + SERVE
        while time.monotonic() < end and proc.poll() is None:
            time.sleep(0.2)
        alive = proc.poll() is None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
        reader.join(timeout=10)
    output = "".join(lines)
    assert first.is_set() and alive, f"{block.name}: ended (or said nothing) before {SERVE} s:\n{output}"
    assert code in (0, 130, -signal.SIGINT), f"{block.name}: exit {code} on Ctrl-C:\n{output}"
    assert "Traceback" not in output and not ERROR.search(output), f"{block.name}:\n{output}"


def workspace(block: Block, factory) -> Path:
    """A folder that looks like the repository (each of its entries linked, ``../shared``
    beside it), with the files of the ``file:`` blocks before ``block`` in its document and the
    inputs it is ``given``."""
    base = factory.mktemp(re.sub(r"\W", "_", block.name))
    work = base / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        # not the package's folder: Python (and Ray's workers, which take the caller's folder
        # onto their path) would import it through the link, and numba, whose cache is keyed
        # on the source's path, would compile every kernel again
        if entry.name not in (".git", "uvms_sim"):
            (work / entry.name).symlink_to(entry)
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (base / "shared").symlink_to(shared)
    for earlier in blocks(block.doc):
        if earlier.line >= block.line:
            break
        if "file" in earlier.marks:
            (work / earlier.marks["file"]).write_text(earlier.text)
    for name in block.marks.get("given", "").split():
        name, _, source = name.partition("=")
        if source:
            shutil.copy(ROOT / source, work / name)
        else:
            make_input(work / name)
    return work


def make_input(path: Path) -> None:
    """A small recording of the kind ``path``'s name says: a rosbag2 folder (no suffix), an
    ArduSub DataFlash log (``.BIN``) or telemetry log (``.tlog``), or a CSV run (``.csv.gz``),
    of 30 s of a simulated BlueROV2 Heavy (the tests' own recordings)."""
    from test_ardupilot_logs import fly, write_dataflash, write_telemetry

    name = path.name
    if name.endswith(".BIN") or name.endswith(".tlog"):
        samples = fly(30.0, seed=len(name))
        (write_dataflash if name.endswith(".BIN") else write_telemetry)(path, samples)
    elif name.endswith(".csv.gz"):
        write_csv_run(path, fly(30.0, seed=len(name)))
    elif "." not in name:
        from test_replay import record

        record(path, "sqlite3", seconds=30.0, seed=len(name))
    else:
        raise AssertionError(f"given: no input of the kind of {name!r} (write NAME=REPOSITORY_PATH)")


def write_csv_run(path: Path, samples) -> None:
    """A CSV run (``replay.sources``): pose in ENU, velocities in body FLU, PWM by motor, 10 Hz."""
    from uvms_sim import frames

    rows = []
    for t, q, v, pwm in samples[::10]:
        pose = [*frames.position_ned_to_enu(q[:3]), *frames.quat_ned_frd_to_enu_flu(q[3:7])]
        twist = [*frames.body_frd_flu(v[:3]), *frames.body_frd_flu(v[3:6])]
        rows.append([t, *pose, *twist, *pwm])
    header = "t,x,y,z,qw,qx,qy,qz,u,v,w,p,q,r," + ",".join(f"pwm{k}" for k in range(1, 9))
    with gzip.open(path, "wt") as f:
        f.write(header + "\n")
        np.savetxt(f, np.array(rows), delimiter=",", fmt="%.9g")
