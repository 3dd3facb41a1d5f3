"""ArduSub's own logs as a replay input: the DataFlash log the autopilot writes (``.BIN``) and
the telemetry log a ground station writes (``.tlog``), both read with pymavlink.

What is taken, on the autopilot's boot clock (``TimeUS`` / ``time_boot_ms``, not the ground
station's receive time, which carries the link's jitter):

==================  ==============================================  ========================================
                    DataFlash ``.BIN``                              telemetry ``.tlog``
==================  ==============================================  ========================================
servo outputs       ``RCOU`` (C1..C14, us, as sent to the ESCs)     ``SERVO_OUTPUT_RAW`` (servo1_raw..16)
attitude            ``XKF1`` of EKF core 0, else ``ATT`` (deg)      ``ATTITUDE`` (rad)
body rates          ``IMU`` instance 0 (GyrX..Z)                    ``ATTITUDE`` (rollspeed..yawspeed)
position, velocity  ``XKF1`` (PN PE PD, VN VE VD)                   ``LOCAL_POSITION_NED``
depth without EKF   ``BARO`` (``-Alt`` of the deepest-reading       ``GLOBAL_POSITION_INT.relative_alt``,
                    sensor, the Bar30 on a BlueROV2)                else ``SCALED_PRESSURE2``
IMU                 ``IMU`` instance 0                              ``SCALED_IMU``/``RAW_IMU`` (mg, mrad/s)
battery             ``BAT`` instance 0 ``Volt``                     ``SYS_STATUS.voltage_battery`` (mV)
parameters          ``PARM``                                        ``PARAM_VALUE``
==================  ==============================================  ========================================

The parameters that matter for the replay (ArduSub 4.x):

- ``SERVOn_FUNCTION``: 33..40 are motors 1..8, 82..85 motors 9..12; the commands are handed to
  the model by motor number (``BagContents.commands`` row index m-1 = motor m). Without
  parameters servo n drives motor n.
- ``MOT_n_DIRECTION = -1``: motor n's thruster is mounted or wired reversed and ArduSub's mixer
  inverts its command (AP_Motors6DOF); the replay declares that thruster reversed.
- ``SERVOn_REVERSED`` does not change a motor output on a PWM ESC (ArduSub writes motor PWM
  with ``SRV_Channels::set_output_pwm``, which ignores it), and the logged PWM is what the ESC
  received either way; it is reported, not applied.
- ``FRAME_CONFIG`` (0 BlueROV1, 1 Vectored, 2 Vectored_6DOF, 3 Vectored_6DOF_90, 4-6
  SimpleROV-3/4/5, 7 Custom) is reported and checked against the description's motors.
- ``EK3_SRC1_POSXY`` / ``EK3_SRC1_VELXY``: with neither set (0, no GPS, DVL or external
  navigation, as on most BlueROV2s) the EKF's horizontal velocity is not a measurement, and the
  recording says so (``BagContents.horizontal`` False): only heave, roll, pitch and yaw are
  compared.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat, euler2quat

from ..frames import body_frd_flu, position_ned_to_enu, quat_ned_frd_to_enu_flu
from ..hydro.environment import STANDARD_GRAVITY
from ..log import logger
from ..sensors import P_ATM
from .bag import MAX_MOTION, BagContents, BagError, Series

DATAFLASH_SUFFIXES = (".bin",)
TELEMETRY_SUFFIXES = (".tlog",)
FRAMES = {0: "bluerov1", 1: "vectored", 2: "vectored_6dof", 3: "vectored_6dof_90", 4: "simplerov_3",
          5: "simplerov_4", 6: "simplerov_5", 7: "custom"}  # fmt: skip
MAX_REBOOT_STEP = 1.0  # s: a boot clock that runs back further than this is a new boot
WRAP_US = 2**32  # µs: SERVO_OUTPUT_RAW.time_usec is a uint32 and wraps after 71.6 min
WRAP_SLACK = 60.0  # s: an unwrapped time within this of the boot clock continues it
WRAPPING = ("SERVO_OUTPUT_RAW",)
DATAFLASH_TYPES = ["RCOU", "ATT", "XKF1", "NKF1", "IMU", "IMU2", "IMU3", "BARO", "BAR2", "BAR3", "BAT",
                   "BAT2", "PARM"]  # fmt: skip
TELEMETRY_TYPES = ["SERVO_OUTPUT_RAW", "ATTITUDE", "LOCAL_POSITION_NED", "GLOBAL_POSITION_INT",
                   "SCALED_PRESSURE2", "SCALED_IMU", "RAW_IMU", "SYS_STATUS", "PARAM_VALUE"]  # fmt: skip
SEA_WATER = 1025.0 * STANDARD_GRAVITY  # Pa per metre of depth, for a pressure-only depth
CALIBRATION_SLACK = 0.5  # m: a barometer calibrated deeper than this was calibrated under water
SPECIFIC_GRAVITY = (0.5, 2.0)  # BARO_SPEC_GRAV outside this is not water: 1.0 (ArduSub's default) is used
# the instance of a message without an instance field, by its name (ArduSub 3.x: IMU2, BAR2, BAT2)
INSTANCE_OF_NAME = {"IMU2": 1, "IMU3": 2, "BAR2": 1, "BAR3": 2, "BAT2": 1}


def is_ardupilot_log(path: str | Path) -> bool:
    return Path(path).suffix.lower() in DATAFLASH_SUFFIXES + TELEMETRY_SUFFIXES


def motor_of_function(function: int) -> int | None:
    """The motor number of a ``SERVOn_FUNCTION`` value (33..40 -> 1..8, 82..85 -> 9..12)."""
    if 33 <= function <= 40:
        return function - 32
    if 82 <= function <= 85:
        return function - 73
    return None


class _Columns:
    """Samples of one kind gathered as rows, with their boot-clock times."""

    def __init__(self) -> None:
        self.t: list[float] = []
        self.rows: list[list[float]] = []

    def add(self, t: float, row) -> bool:
        """Keep a sample; False (and nothing kept) for one with a value that is not a finite
        number within ``MAX_MOTION`` (a corrupt record, refused as ``read_bag`` refuses one)."""
        values = [_number(x) for x in row]
        if not all(abs(v) <= MAX_MOTION for v in values):  # NaN fails the comparison too
            return False
        self.t.append(t)
        self.rows.append(values)
        return True

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.t:
            return np.zeros(0), np.zeros((0, 0))
        t, rows = np.asarray(self.t), np.asarray(self.rows, dtype=float)
        order = np.argsort(t, kind="stable")
        t, rows = t[order], rows[order]
        keep = np.r_[True, np.diff(t) > 0.0]  # one sample per instant
        return t[keep], rows[keep]


def _number(value) -> float:
    """A field as a float; NaN for one that is not a number (a damaged format gives strings)."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan


class _Boot:
    """What one boot of the autopilot logged."""

    def __init__(self) -> None:
        self.cols = {k: _Columns() for k in ("servo", "att", "ekf", "ekf2", "gyro", "depth", "imu", "battery",
                                             "position")}  # fmt: skip
        self.baro: dict[int, _Columns] = {}
        self.counts: Counter = Counter()
        self.last = -math.inf
        self.wrap: dict[str, float] = {}  # kind -> seconds added to unwrap its clock


class _Sink(io.TextIOBase):
    """Stands in for stdout and stderr while pymavlink reads: it prints a line for every bad byte
    of a damaged or foreign file (a million for a zero-filled card), from Python and from its
    compiled indexer; the lines are counted and the first is kept."""

    def __init__(self) -> None:
        self.lines = 0
        self.first = ""

    def write(self, text: str) -> int:
        if text.strip() and not self.first:
            self.first = text.strip().splitlines()[0]
        self.lines += text.count("\n")
        return len(text)


@contextlib.contextmanager
def _quiet(sink: _Sink):
    """Standard output and error (Python's and the process's file descriptors 1 and 2) into
    ``sink`` for the duration."""
    import ctypes
    import tempfile

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = []
    with tempfile.TemporaryFile(mode="w+b") as captured:
        try:
            for fd in (1, 2):
                saved.append((fd, os.dup(fd)))
                os.dup2(captured.fileno(), fd)
        except OSError:  # no such descriptors (an embedding host): Python's streams only
            pass
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                yield sink
        finally:
            with contextlib.suppress(Exception):
                ctypes.CDLL(None).fflush(None)  # the C library's buffers, before the descriptors go back
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)
            captured.seek(0)
            text = captured.read()
            sink.write(text[: text.find(b"\n") + 1].decode(errors="replace"))
            sink.lines += text.count(b"\n") - 1 if text.count(b"\n") else 0


def read_ardupilot_log(path: str | Path) -> BagContents:
    """A DataFlash (``.BIN``) or telemetry (``.tlog``) log as ``BagContents`` (module doc);
    ``BagError`` naming the file for one that cannot be used."""
    path = Path(path)
    if not path.is_file():
        raise BagError(f"{path}: no such log")
    dataflash = path.suffix.lower() in DATAFLASH_SUFFIXES
    sink = _Sink()
    with _quiet(sink):
        boots, params = _read(path, dataflash)
    decoded = sum(
        sum(v for k, v in b.counts.items() if k in DATAFLASH_TYPES + TELEMETRY_TYPES) for b in boots
    )
    if sink.lines and not decoded and not params:
        what = "DataFlash" if dataflash else "MAVLink telemetry"
        raise BagError(f"{path}: not a {what} log: nothing in it could be decoded ({sink.first})")
    if sink.lines:
        logger.warning(f"{path}: pymavlink reported {sink.lines} damaged part(s) of the log ({sink.first})")
    boot = max(boots, key=lambda b: len(b.cols["servo"].t))
    if len(boots) > 1:
        which = boots.index(boot) + 1
        logger.warning(
            f"{path}: the autopilot rebooted {len(boots) - 1} time(s); boot {which} of {len(boots)} is used "
            f"(the one with the most servo outputs, {len(boot.cols['servo'].t)}), the others are not"
        )
    counts = boot.counts
    for what in ("undecodable", "not finite or beyond 1e6", "without the expected fields"):
        by_kind = {k[len(what) + 1 :]: n for k, n in counts.items() if k.startswith(what + " ")}
        total = counts[what] + sum(by_kind.values())
        if total:
            detail = f" ({', '.join(f'{k} {n}' for k, n in sorted(by_kind.items()))})" if by_kind else ""
            logger.warning(f"{path}: {total} record(s) {what} skipped{detail}")
    cols = boot.cols
    if boot.baro and not cols["depth"].t:  # the deepest-reading sensor is the one in the water
        deepest = max(boot.baro.values(), key=lambda c: float(np.median([-r[0] for r in c.rows])))
        cols["depth"] = deepest
    if not cols["ekf"].t and cols["ekf2"].t:  # EKF2 (ArduSub 3.x): NKF1
        cols["ekf"] = cols["ekf2"]
    return _contents(path, dataflash, cols, params, counts)


def _read(path: Path, dataflash: bool) -> tuple[list[_Boot], dict[str, float]]:
    """The log's records by boot, and its parameters (the latest value of each)."""
    from pymavlink import mavutil

    try:
        log = mavutil.mavlink_connection(str(path), dialect="ardupilotmega", zero_time_base=True)
    except Exception as exc:  # pymavlink raises several kinds on a damaged header
        raise BagError(f"{path}: cannot open the log: {type(exc).__name__}: {exc}".splitlines()[0]) from None
    kinds = DATAFLASH_TYPES if dataflash else TELEMETRY_TYPES
    params: dict[str, float] = {}
    boots = [_Boot()]
    try:
        while True:
            boot = boots[-1]
            try:
                msg = log.recv_match(type=kinds)
            except Exception:  # a damaged record: pymavlink resynchronises on the next one
                boot.counts["undecodable"] += 1
                continue
            if msg is None:
                break
            kind = msg.get_type()
            if kind == "BAD_DATA":
                boot.counts["undecodable"] += 1
                continue
            try:
                if kind in ("PARM", "PARAM_VALUE"):
                    _parameter(msg, kind, params)
                    continue
                t = _boot_time(msg, kind, boot)
                if t is None and math.isfinite(boot.last):  # SYS_STATUS carries no time: the latest one
                    t = boot.last
                if t is None or not math.isfinite(t):
                    boot.counts["without a time"] += 1
                    continue
                if t < boot.last - MAX_REBOOT_STEP:  # the autopilot rebooted
                    boot = _Boot()
                    boots.append(boot)
                    t = _boot_time(msg, kind, boot)
                    if t is None:
                        continue
                boot.last = max(boot.last, t)
                boot.counts[kind] += 1
                if not _take(msg, kind, t, boot):
                    boot.counts[f"not finite or beyond 1e6 {kind}"] += 1
            except (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError):
                boot.counts[f"without the expected fields {kind}"] += (
                    1  # a damaged FMT, or a format unknown here
                )
    finally:
        log.close()
    return boots, params


def _parameter(msg, kind: str, params: dict[str, float]) -> None:
    name = msg.Name if kind == "PARM" else msg.param_id
    value = _number(msg.Value if kind == "PARM" else msg.param_value)
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    if math.isfinite(value):
        params[str(name).rstrip("\x00")] = value


def _boot_time(msg, kind: str, boot: _Boot) -> float | None:
    """The record's time on the boot clock; a wrapping clock (``WRAPPING``) unwrapped against
    the boot's latest time when it went round (not a reboot: the other clocks go on)."""
    if hasattr(msg, "TimeUS"):
        return _number(msg.TimeUS) * 1e-6
    if hasattr(msg, "time_boot_ms"):
        return _number(msg.time_boot_ms) * 1e-3
    if hasattr(msg, "time_usec"):  # SERVO_OUTPUT_RAW, RAW_IMU: microseconds since boot
        t = _number(msg.time_usec) * 1e-6
        if kind in WRAPPING:
            t += boot.wrap.get(kind, 0.0)
            turns = round((boot.last - t) / (WRAP_US * 1e-6)) if math.isfinite(boot.last) else 0
            if turns >= 1 and abs(t + turns * WRAP_US * 1e-6 - boot.last) < WRAP_SLACK:
                boot.wrap[kind] = boot.wrap.get(kind, 0.0) + turns * WRAP_US * 1e-6
                t += turns * WRAP_US * 1e-6
        return t
    return None  # SYS_STATUS: taken at the latest time of a message that has one


def _instance(msg, kind: str) -> int:
    """The sensor instance: the ``I``/``Inst``/``Instance``/``C`` field (ArduSub 4.x), else the
    message's name (ArduSub 3.x: IMU2, BAR2, BAT2, ...)."""
    for field in ("I", "Inst", "Instance", "C"):
        value = getattr(msg, field, None)
        if value is not None:
            return int(value)
    return INSTANCE_OF_NAME.get(kind, 0)


def _take(msg, kind: str, t: float, boot: _Boot) -> bool:
    """File one message's values (module doc table); False for one with a non-finite value or
    one beyond ``MAX_MOTION``, which is not kept."""
    cols = boot.cols
    if kind == "RCOU":
        return cols["servo"].add(t, [getattr(msg, f"C{n}", 0) for n in range(1, 15)])
    if kind == "SERVO_OUTPUT_RAW":
        if getattr(msg, "port", 0) == 0:  # servos 1-8 (and 9-16 in MAVLink 2) of the first port
            return cols["servo"].add(t, [getattr(msg, f"servo{n}_raw", 0) for n in range(1, 17)])
    elif kind == "ATT":
        return cols["att"].add(t, _radians(msg.Roll, msg.Pitch, msg.Yaw))
    elif kind == "ATTITUDE":
        rates = [msg.rollspeed, msg.pitchspeed, msg.yawspeed]
        if not _finite(rates):
            return False
        return cols["att"].add(t, [msg.roll, msg.pitch, msg.yaw]) and cols["gyro"].add(t, rates)
    elif kind in ("XKF1", "NKF1"):
        if _instance(msg, kind) == 0:
            row = [*_radians(msg.Roll, msg.Pitch, msg.Yaw), msg.PN, msg.PE, msg.PD, msg.VN, msg.VE, msg.VD]
            return cols["ekf" if kind == "XKF1" else "ekf2"].add(t, row)
    elif kind == "LOCAL_POSITION_NED":
        return cols["position"].add(t, [msg.x, msg.y, msg.z, msg.vx, msg.vy, msg.vz])
    elif kind == "GLOBAL_POSITION_INT":
        return cols["depth"].add(t, [_number(msg.relative_alt) * 1e-3])  # up, as BARO Alt
    elif kind == "SCALED_PRESSURE2":
        return boot.baro.setdefault(1, _Columns()).add(
            t, [-(_number(msg.press_abs) * 100.0 - P_ATM) / SEA_WATER]
        )
    elif kind in ("BARO", "BAR2", "BAR3"):
        return boot.baro.setdefault(_instance(msg, kind), _Columns()).add(t, [msg.Alt])
    elif kind in ("IMU", "IMU2", "IMU3"):
        if _instance(msg, kind) == 0:
            gyro = [msg.GyrX, msg.GyrY, msg.GyrZ]
            row = [*gyro, msg.AccX, msg.AccY, msg.AccZ]
            if not _finite(row):
                return False
            return cols["imu"].add(t, row) and cols["gyro"].add(t, gyro)
    elif kind in ("SCALED_IMU", "RAW_IMU"):  # mrad/s and milli-g
        g = STANDARD_GRAVITY * 1e-3
        gyro = [_number(x) * 1e-3 for x in (msg.xgyro, msg.ygyro, msg.zgyro)]
        return cols["imu"].add(t, [*gyro, *(_number(x) * g for x in (msg.xacc, msg.yacc, msg.zacc))])
    elif kind in ("BAT", "BAT2"):
        if _instance(msg, kind) == 0:
            return cols["battery"].add(t, [msg.Volt])
    elif kind == "SYS_STATUS":
        if msg.voltage_battery not in (0, 65535):
            return cols["battery"].add(t, [_number(msg.voltage_battery) * 1e-3])
    return True


def _radians(*degrees) -> list[float]:
    return [math.radians(_number(d)) if abs(_number(d)) <= MAX_MOTION else math.nan for d in degrees]


def _finite(values) -> bool:
    return all(abs(_number(v)) <= MAX_MOTION for v in values)


def _interp(t: np.ndarray, ts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows at times t, linear between samples and held beyond the ends."""
    return np.stack([np.interp(t, ts, rows[:, j]) for j in range(rows.shape[1])], axis=1)


def _contents(path: Path, dataflash: bool, cols, params: dict[str, float], counts: Counter) -> BagContents:
    t_servo, servo = cols["servo"].arrays()
    if not len(t_servo):
        what = "RCOU" if dataflash else "SERVO_OUTPUT_RAW"
        raise BagError(f"{path}: no servo outputs ({what}) in the log")
    motors = _motor_columns(params, servo.shape[1])
    commands = np.zeros((len(servo), max(motors) if motors else servo.shape[1]))
    if motors:
        for motor, column in motors.items():
            commands[:, motor - 1] = servo[:, column]
    else:
        commands[:] = servo
    odometry, horizontal = _odometry(cols, params)
    surface_offset = calibration_depth(params)
    odometry[1][:, 2] -= surface_offset  # ENU z is up
    start = float(min(t_servo[0], odometry[0][0] if len(odometry[0]) else math.inf))
    t_odo, rows = odometry
    gaps = np.diff(t_servo) if len(t_servo) > 1 else np.zeros(1)
    recorded = any(f"MOT_{n}_DIRECTION" in params for n in range(1, 13))
    reversed_motors = (
        frozenset(n for n in range(1, 13) if params.get(f"MOT_{n}_DIRECTION", 1.0) == -1.0)
        if recorded
        else None
    )
    frame = FRAMES.get(int(params["FRAME_CONFIG"])) if "FRAME_CONFIG" in params else None
    t_imu, imu = cols["imu"].arrays()
    t_bat, bat = cols["battery"].arrays()
    contents = BagContents(
        Series(list(t_servo - start), list(commands)),
        Series(list(t_odo - start), list(rows)),
        "RCOU" if dataflash else "SERVO_OUTPUT_RAW",
        ("XKF1" if cols["ekf"].t else "ATT") if dataflash else "ATTITUDE",
        {},
        0,
        float(gaps.max()),
        0,
    )
    contents.imu = Series(list(t_imu - start), list(imu))
    contents.battery = Series(list(t_bat - start), list(bat[:, 0]) if len(bat) else [])
    contents.parameters = params
    contents.reversed_motors = reversed_motors
    contents.frame = frame
    contents.horizontal = horizontal
    contents.format = "ArduPilot DataFlash" if dataflash else "MAVLink telemetry log"
    contents.motion_source = "autopilot estimate"
    if gaps.max() > 0.25:
        contents.notes.append(
            f"servo outputs as far as {gaps.max():.2f} s apart: the replay holds each one until the next; "
            "stream SERVO_OUTPUT_RAW faster for a finer replay (SRn_RC_CHAN, or MAV_CMD_SET_MESSAGE_INTERVAL)"
        )
    if specific_gravity(params) != params.get("BARO_SPEC_GRAV", 1.0):
        contents.notes.append(
            f"BARO_SPEC_GRAV = {params['BARO_SPEC_GRAV']:g} is no water's ({SPECIFIC_GRAVITY[0]:g}..."
            f"{SPECIFIC_GRAVITY[1]:g}): 1.0 used for the barometer's calibration depth"
        )
    if surface_offset:
        contents.notes.append(
            f"the barometer was calibrated {surface_offset:.2f} m under water (BAROn_GND_PRESS): depths are "
            "moved down by that much, measured against the standard atmosphere"
        )
    reversed_servos = sorted(n for n in range(1, 17) if params.get(f"SERVO{n}_REVERSED", 0.0) == 1.0)
    if reversed_servos and motors:
        on_motors = [n for n in reversed_servos if n - 1 in motors.values()]
        if on_motors:
            contents.notes.append(
                f"SERVO{'/'.join(map(str, on_motors))}_REVERSED set on motor outputs: ArduSub ignores it "
                "for PWM motors (MOT_n_DIRECTION reverses a motor); not applied"
            )
    return contents


def calibration_depth(params: dict[str, float]) -> float:
    """How far under water the primary barometer was calibrated (ArduSub's depth is relative
    to the pressure at calibration, ``BAROn_GND_PRESS``; depth = (p - p_gnd) / (9800 SG) as in
    AP_Baro): 0 for a calibration at the surface, within ``CALIBRATION_SLACK`` of the standard
    atmosphere (the weather moves it by about 0.3 m)."""
    primary = int(params.get("BARO_PRIMARY", 0))
    ground = params.get(f"BARO{primary + 1}_GND_PRESS", 0.0)
    depth = (ground - P_ATM) / (9800.0 * specific_gravity(params)) if ground > 0 else 0.0
    return float(depth) if CALIBRATION_SLACK < depth <= MAX_MOTION else 0.0


def specific_gravity(params: dict[str, float]) -> float:
    """``BARO_SPEC_GRAV``, or 1.0 (ArduSub's default) for a value that is no water's
    (outside ``SPECIFIC_GRAVITY``: 0 would divide by zero)."""
    value = params.get("BARO_SPEC_GRAV", 1.0)
    return value if SPECIFIC_GRAVITY[0] <= value <= SPECIFIC_GRAVITY[1] else 1.0


def _motor_columns(params: dict[str, float], width: int) -> dict[int, int]:
    """motor number -> servo column (0-based) from ``SERVOn_FUNCTION``; empty without them."""
    out = {}
    for n in range(1, width + 1):
        motor = motor_of_function(int(params.get(f"SERVO{n}_FUNCTION", 0)))
        if motor is not None and motor not in out:
            out[motor] = n - 1
    return out


def _odometry(cols, params: dict[str, float]) -> tuple[tuple[np.ndarray, np.ndarray], bool]:
    """ENU/FLU odometry rows (``bag.BagContents.odometry`` layout) on the attitude's timeline,
    and whether the horizontal velocity is measured (module doc)."""
    t_ekf, ekf = cols["ekf"].arrays()
    t_att, att = cols["att"].arrays()
    t_pos, pos = cols["position"].arrays()
    t_dep, dep = cols["depth"].arrays()
    t_gyr, gyr = cols["gyro"].arrays()
    if len(t_ekf):
        t, euler, ned = t_ekf, ekf[:, :3], ekf[:, 3:9]
    elif len(t_att):
        t, euler = t_att, att
        if len(t_pos):
            ned = _interp(t, t_pos, pos)
        else:
            ned = np.zeros((len(t), 6))
            if len(t_dep):
                ned[:, 2] = -_interp(t, t_dep, dep)[:, 0]  # Alt is up: depth is -Alt
                ned[:, 5] = np.gradient(ned[:, 2], t) if len(t) > 1 else 0.0
    else:
        return (np.zeros(0), np.zeros((0, 13))), False
    sources = [params.get(f"EK3_SRC1_{k}", -1.0) for k in ("POSXY", "VELXY")]
    horizontal = (len(t_ekf) > 0 or len(t_pos) > 0) and not all(s == 0.0 for s in sources)
    rates = _interp(t, t_gyr, gyr) if len(t_gyr) else np.zeros((len(t), 3))
    rows = np.empty((len(t), 13))
    for k in range(len(t)):
        roll, pitch, yaw = euler[k]
        quat = euler2quat(yaw, pitch, roll, "rzyx")  # FRD -> NED (ArduPilot's 3-2-1 Euler angles)
        v_body = euler2mat(yaw, pitch, roll, "rzyx").T @ ned[k, 3:6]
        rows[k, :3] = position_ned_to_enu(ned[k, :3])
        rows[k, 3:7] = quat_ned_frd_to_enu_flu(quat)
        rows[k, 7:10] = body_frd_flu(v_body)
        rows[k, 10:13] = body_frd_flu(rates[k])
    return (t, rows), horizontal
