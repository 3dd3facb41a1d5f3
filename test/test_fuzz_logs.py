"""ArduSub's logs under hostile files: thousands of mutated DataFlash ``.BIN`` and telemetry
``.tlog`` files (``FUZZ_SCALE`` times as many), written from a short simulated flight by
pymavlink's own writers (test/ardupilot_logs.py) and then spoilt: random bit flips, truncations,
bytes inserted and cut, and NaN, infinite, huge and zero values in the fields of every message
the reader takes. Through the library reader (``read_ardupilot_log``) and the command line
(``uvms-sim replay``). What must hold: a file is refused with a one-line ``BagError`` naming it
(exit 2 for the command), or read into commands and motion that are finite, within the bags'
bound of 1e6, on strictly increasing times, with unit quaternions; pymavlink's own output
never reaches the terminal; never a traceback."""

from __future__ import annotations

import contextlib
import io
import math
import os
from pathlib import Path

import numpy as np
import pytest
from test_ardupilot_logs import fly, write_dataflash, write_telemetry

from uvms_sim.replay.ardupilot_log import read_ardupilot_log
from uvms_sim.replay.bag import BagError

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
BAD_VALUES = [math.nan, math.inf, -math.inf, 1e34, -1e34, 3e38, 0.0, 1e-45, 1e6 + 1]
# the float fields of the records the reader takes (int fields are spoilt by the bit flips)
DATAFLASH_FIELDS = {"ATT": ["Roll", "Pitch", "Yaw"], "XKF1": ["VN", "VE", "VD", "PN", "PE", "PD"],
                    "IMU": ["GyrX", "GyrY", "GyrZ", "AccX", "AccY", "AccZ"], "BARO": ["Alt", "Press"],
                    "BAT": ["Volt"], "PARM": ["Value"]}  # fmt: skip
TELEMETRY_FIELDS = {"ATTITUDE": ["roll", "pitch", "yaw", "rollspeed", "pitchspeed", "yawspeed"],
                    "LOCAL_POSITION_NED": ["x", "y", "z", "vx", "vy", "vz"],
                    "PARAM_VALUE": ["param_value"]}  # fmt: skip


@pytest.fixture(scope="module")
def short_flight():
    return fly(3.0, seed=3)


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """Bit flips, a truncation, bytes inserted or cut, or several of them."""
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(5))
        if kind == 0:  # bit flips
            for _ in range(int(rng.integers(1, 40))):
                k = int(rng.integers(len(b)))
                b[k] ^= 1 << int(rng.integers(8))
        elif kind == 1 and len(b) > 2:  # truncated
            del b[int(rng.integers(1, len(b))) :]
        elif kind == 2:  # random bytes inserted
            k = int(rng.integers(len(b) + 1))
            b[k:k] = rng.bytes(int(rng.integers(1, 300)))
        elif kind == 3 and len(b) > 10:  # a run cut out
            k = int(rng.integers(len(b) - 5))
            del b[k : k + int(rng.integers(1, 200))]
        else:  # a byte set to 0x00 or 0xff over a run (a worn card)
            k, n = int(rng.integers(len(b))), int(rng.integers(1, 64))
            b[k : k + n] = bytes([0xFF if rng.integers(2) else 0]) * len(b[k : k + n])
    return bytes(b)


def spoiler(rng: np.random.Generator, fields: dict[str, list[str]]):
    """Sets bad values (``BAD_VALUES``) in random float fields of about one record in 20."""

    def spoil(k: int, name: str, values: dict) -> None:
        if name in fields and rng.random() < 0.05:
            values[fields[name][int(rng.integers(len(fields[name])))]] = BAD_VALUES[
                int(rng.integers(len(BAD_VALUES)))
            ]

    return spoil


def check_read(path: Path) -> str:
    """The reader's answer to one file, checked: 'refused' or 'read'."""
    try:
        bag = read_ardupilot_log(path)
    except BagError as exc:
        text = str(exc)
        assert str(path) in text and "\n" not in text, text
        return "refused"
    t, cmds = bag.commands.arrays()
    assert len(t) and np.all(np.isfinite(cmds)) and np.all(np.abs(cmds) <= 1e6)
    assert np.all(np.isfinite(t)) and np.all(np.diff(t) > 0)
    t_odo, odo = bag.odometry.arrays()
    assert np.all(np.isfinite(odo)) and np.all(np.abs(odo) <= 1e6) and np.all(np.isfinite(t_odo))
    assert np.all(np.diff(t_odo) > 0)
    if len(odo):
        np.testing.assert_allclose(np.linalg.norm(odo[:, 3:7], axis=1), 1.0, atol=1e-6)
    for series in (bag.imu, bag.battery):
        assert np.all(np.isfinite(np.asarray(series.values, dtype=float)))
    return "read"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("suffix", [".BIN", ".tlog"])
def test_mutated_logs_are_read_finitely_or_refused_in_one_line(tmp_path, short_flight, suffix, capfd):
    """750 * FUZZ_SCALE files of each kind: one in three with bad values written into its
    fields, the rest spoilt byte-wise (some both); each read or refused, as the module says;
    pymavlink's lines about bad bytes stay off the terminal (the reader's warnings name the
    file)."""
    rng = np.random.default_rng(37 if suffix == ".BIN" else 38)
    good = tmp_path / f"good{suffix}"
    writer = write_dataflash if suffix == ".BIN" else write_telemetry
    fields = DATAFLASH_FIELDS if suffix == ".BIN" else TELEMETRY_FIELDS
    writer(good, short_flight)
    clean = good.read_bytes()
    answers = {"read": 0, "refused": 0}
    n = 750 * SCALE
    for k in range(n):
        path = tmp_path / f"f{k % 10}{suffix}"
        if k % 3 == 0:
            writer(path, short_flight, spoil=spoiler(rng, fields))
            if rng.random() < 0.5:
                path.write_bytes(mutate(path.read_bytes(), rng))
        else:
            path.write_bytes(mutate(clean, rng))
        answers[check_read(path)] += 1
    out, err = capfd.readouterr()
    stray = [line for line in (out + err).splitlines() if str(tmp_path) not in line]  # not the reader's
    assert not stray, stray[:20]
    assert answers["read"] > n // 3 and sum(answers.values()) == n, answers
    print(f"{suffix}: {n} mutated logs, {answers}")


def test_mutated_logs_through_the_command_line(tmp_path, short_flight):
    """``uvms-sim replay FILE --config bluerov2_heavy`` on 15 * FUZZ_SCALE mutated logs of each
    kind: exit 0 with a finite report, or exit 2 with one line naming the file; never a
    traceback."""
    from uvms_sim.cli import main as cli_main

    rng = np.random.default_rng(39)
    counts = {0: 0, 2: 0}
    for suffix, writer in ((".BIN", write_dataflash), (".tlog", write_telemetry)):
        good = tmp_path / f"good{suffix}"
        writer(good, short_flight)
        for k in range(15 * SCALE):
            path = tmp_path / f"c{k}{suffix}"
            path.write_bytes(mutate(good.read_bytes(), rng))
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli_main(["replay", str(path), "--config", "bluerov2_heavy", "--dt", "0.02"])
            assert code in (0, 2) and "Traceback" not in err.getvalue(), err.getvalue()
            if code == 2:
                lines = [line for line in err.getvalue().splitlines() if line.startswith("error:")]
                assert len(lines) == 1 and str(path) in lines[0], err.getvalue()
            else:
                assert "nan" not in out.getvalue().lower(), out.getvalue()
            counts[code] += 1
            path.unlink()
    assert sum(counts.values()) == 30 * SCALE
    print(f"command line: {30 * SCALE} mutated logs, exit codes {counts}")
