"""Every kind of recording a replay reads, by its name: rosbags (ROS 2 directories or
``.db3``/``.mcap``, and ROS 1 ``.bag`` files, through rosbags), ArduSub's DataFlash ``.BIN``
and ``.tlog`` logs (``ardupilot_log``), and CSV runs of the form of the BlueROV2 Heavy tank
runs (``read_csv_run``).

The CSV form: a header line, then ``t, x, y, z, qw, qx, qy, qz, u, v, w, p, q, r, pwm1..pwmN``
(``t`` optional), the pose in a z-up (ENU) world, the velocities in body FLU axes and the servo
outputs in microseconds, one row per sample; plain or gzip (``.csv.gz``).
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np

from .ardupilot_log import is_ardupilot_log, read_ardupilot_log
from .bag import BagContents, BagError, Series, read_bag
from .windows import Run, run_from_recording

CSV_COLUMNS = ["x", "y", "z", "qw", "qx", "qy", "qz", "u", "v", "w", "p", "q", "r"]


def is_csv(path: str | Path) -> bool:
    name = Path(path).name.lower()
    return name.endswith(".csv") or name.endswith(".csv.gz")


def read_recording(
    path: str | Path, command_topic: str | None = None, odometry_topic: str | None = None
) -> BagContents:
    """Any recording (module doc) as ``BagContents``; ``BagError`` naming the file when it
    cannot be used. Topic names apply to bags only."""
    if is_ardupilot_log(path):
        return read_ardupilot_log(path)
    if is_csv(path):
        return read_csv_run(path)
    return read_bag(path, command_topic, odometry_topic)


def read_csv_run(path: str | Path, rate: float = 10.0) -> BagContents:
    """A CSV run (module doc); ``t`` is the first column when present, else sample index /
    ``rate`` (the tank runs have none: 10 Hz)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as f:
            header = [h.strip() for h in f.readline().strip().split(",")]
            with warnings.catch_warnings():  # an empty file is reported below, not warned about
                warnings.simplefilter("ignore", UserWarning)
                data = np.loadtxt(f, delimiter=",", ndmin=2)
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as exc:
        raise BagError(f"{path}: cannot read the CSV run: {exc}") from None
    col = {name: k for k, name in enumerate(header)}
    missing = [n for n in CSV_COLUMNS if n not in col]
    if missing:
        raise BagError(f"{path}: columns {missing} missing (has {header})")
    servos = sorted((int(n[3:]), k) for n, k in col.items() if n.startswith("pwm") and n[3:].isdigit())
    if not servos or not len(data):
        raise BagError(f"{path}: no samples, or no pwm1..pwmN columns")
    if not np.all(np.isfinite(data)):
        raise BagError(f"{path}: {int(np.sum(~np.isfinite(data)))} values are not finite numbers")
    rows = data[:, [col[n] for n in CSV_COLUMNS]].copy()
    norm = np.linalg.norm(rows[:, 3:7], axis=1, keepdims=True)
    if np.any(norm < 0.5):
        raise BagError(f"{path}: rows without a unit quaternion (qw, qx, qy, qz)")
    rows[:, 3:7] /= norm
    pwm = np.zeros((len(data), servos[-1][0]))
    for n, k in servos:
        pwm[:, n - 1] = data[:, k]
    t = data[:, col["t"]] if "t" in col else np.arange(len(data)) / rate
    if np.any(np.diff(t) <= 0.0):
        raise BagError(f"{path}: column t does not increase")
    gaps = np.diff(t) if len(t) > 1 else np.zeros(1)
    out = BagContents(
        Series(list(t), list(pwm)), Series(list(t), list(rows)), "pwm columns", "pose and velocity columns",
        {}, 0, float(gaps.max()), 0,
    )  # fmt: skip
    out.format = "CSV run"
    return out


def read_run(path: str | Path, rate: float = 10.0) -> Run:
    """A recording (``read_recording``; CSV runs at ``rate`` without a t column) as a ``Run``
    named after its file."""
    bag = read_csv_run(path, rate) if is_csv(path) else read_recording(path)
    return run_from_recording(Path(path).name.split(".")[0], bag)
