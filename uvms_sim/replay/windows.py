"""Windowed validation against real runs: every window of a run replayed from the measured
state, with the baselines a model must beat.

A run recorded on a vehicle that its autopilot stabilised cannot be replayed open loop for
minutes (the model's roll and depth drift without the controller); restarted from the
measured pose and velocity every ``seconds`` (12 s in Nielsen et al. 2018, section 4.2), the
body velocities it predicts on the recorded servo outputs say what the model is worth. For
each window: the speed error as the DTW distance between predicted and measured speed (the
mean point distance along the optimal alignment, ``dtw.dtw_distance``) within a Sakoe-Chiba
band of ``dtw.WARP_BAND`` seconds (Sakoe and Chiba 1978), and the RMSE of u, v, w and r,
beside two baselines that need no model: the velocity stays what it was at the window's start
(constant velocity), and the vehicle stands still (zero velocity); a band changes nothing for
these constant series (every path visits each measured sample, the cheapest once). The
model's DTW without a band is kept as an extra column (``unconstrained_speed_dtw``): it lets a
prediction that is seconds late score as well as a timely one, so it is never the headline.

What is compared:

- ``impose``: on a real log the autopilot's stabilisation was in the loop; the model has none.
  With ``attitude`` the measured roll, pitch, yaw and body rates replace the model's at every
  sample, with ``depth`` the measured depth and heave; what is then predicted is the motion
  left free (surge and sway for both), and the imposed axes (r for attitude, w for depth) are
  not scored.
- A run whose horizontal velocity was not measured (an ArduSub log without GPS, DVL or
  external navigation: ``Run.horizontal`` False) scores w and r only, and its speed is |w|.

Runs come from any recording (``run_from_recording``: rosbags, ArduSub logs, the tank CSVs of
``sources.read_csv_run``), in the physics frames, commands by motor number and held between
their stamps as the autopilot held them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..model.system import System
from ..simulator import Simulator
from .bag import BagContents
from .compare import rmse
from .dtw import WARP_BAND, band_samples, dtw_distance
from .run import free_joint_state

AXES = {"u": 0, "v": 1, "w": 2, "r": 5}
IMPOSABLE = ("attitude", "depth")


@dataclass(frozen=True)
class Run:
    """A recorded run in the physics frames: sample times (s), free-joint configuration (NED
    position, FRD->NED quaternion) and body velocity (FRD) at them; the servo outputs by motor
    (us; column m-1 = motor m, 0 = not set up) at ``t_cmd``."""

    name: str
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    pwm: np.ndarray
    t_cmd: np.ndarray
    horizontal: bool = True
    reversed_motors: frozenset[int] | None = None  # None: as the description declares them
    voltage: float | None = None  # thrusters' supply, V (None: as the description declares it)


def run_from_recording(name: str, bag: BagContents) -> Run:
    """The measured motion and commands of a recording (``bag.read_bag``,
    ``ardupilot_log.read_ardupilot_log``, ``sources.read_csv_run``) as a ``Run``."""
    t, odo = bag.odometry.arrays()
    if len(t) < 2:
        raise ValueError(
            f"{name}: windowed validation needs the measured motion (odometry, poses or an estimate)"
        )
    t_cmd, pwm = bag.commands.arrays()
    if not len(t_cmd):
        raise ValueError(f"{name}: no thruster commands (servo outputs) to replay")
    q = np.empty((len(t), 7))
    v = np.empty((len(t), 6))
    for k, row in enumerate(odo):
        q[k], v[k] = free_joint_state(row)
    return Run(name, t, q, v, pwm, t_cmd, bag.horizontal, bag.reversed_motors)


def with_reversed_motors(system: System, motors: set[int] | frozenset[int]) -> System:
    """The same description with the thrusters of these motor numbers reversed (ArduSub
    MOT_n_DIRECTION = -1), as the vehicle a run was recorded on was set up."""
    vehicles = tuple(
        replace(veh, thrusters=tuple(replace(t, reversed=t.motor in motors) for t in veh.thrusters))
        for veh in system.vehicles
    )
    return replace(system, vehicles=vehicles)


def with_supply_voltage(system: System, volts: float) -> System:
    """The same description with its T200 thrusters on a ``volts`` supply (a log's battery);
    ValueError for thrusters without a voltage model or outside the tables' 10-20 V."""
    from ..actuators import t200

    t200.check_voltage(volts)
    vehicles = []
    for veh in system.vehicles:
        spec = dict(veh.thruster_model)
        if veh.thrusters and "voltage" not in spec:
            raise ValueError(
                f"vehicle {veh.name}: a supply voltage needs thrusters modelled from the T200 tables "
                "(thruster_model: {preset: t200, voltage: ...})"
            )
        if "voltage" in spec:
            spec["voltage"] = float(volts)
        vehicles.append(replace(veh, thruster_model=tuple(spec.items())))
    return replace(system, vehicles=tuple(vehicles))


@dataclass
class WindowResult:
    run: str
    start: float
    speed_dtw: float
    constant_speed_dtw: float
    zero_speed_dtw: float
    rmse: dict[str, float]  # the axes scored (module doc)
    constant_rmse: dict[str, float]
    zero_rmse: dict[str, float]
    ok: bool = True
    unconstrained_speed_dtw: float = np.nan  # the same DTW without a warp band (module doc)
    prediction: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)), repr=False)


def replay_window(
    sim: Simulator, run: Run, k0: int, k1: int, dt: float, impose: tuple[str, ...] = ()
) -> np.ndarray:
    """Body velocities (FRD) predicted at samples k0..k1-1, restarted from the measured state
    at k0 with the thrusters spun up to the command then, each recorded command held until the
    next; ``impose`` as in the module doc."""
    s = sim.model.q_slice(0)
    q = sim.state.q.copy()
    q[s] = run.q[k0]
    v = np.zeros(sim.model.nv)
    v[:6] = run.v[k0]
    sim.reset(q, v)
    sim.state.t = float(run.t[k0])
    bank = sim.thrusters
    if bank is None:
        raise ValueError("replaying thruster commands needs a system with thrusters")
    c = max(0, int(np.searchsorted(run.t_cmd, run.t[k0], side="right")) - 1)
    bank.set_motor_pwm(run.pwm[c])
    bank.n[:] = bank.shaft_speed_targets()
    out = np.empty((k1 - k0, 6))
    out[0] = sim.state.v[:6]
    for k in range(k0 + 1, k1):
        t_end = float(run.t[k])
        while sim.state.t < t_end - 1e-9:
            while c + 1 < len(run.t_cmd) and run.t_cmd[c + 1] <= sim.state.t + 1e-9:
                c += 1
                bank.set_motor_pwm(run.pwm[c])
            t_next = run.t_cmd[c + 1] if c + 1 < len(run.t_cmd) else np.inf
            span = min(t_end, t_next) - sim.state.t
            steps = max(1, int(np.ceil(span / dt - 1e-9)))
            sim.advance(span / steps, steps)
        if "attitude" in impose:
            sim.state.q[3:7] = run.q[k, 3:7]
            sim.state.v[3:6] = run.v[k, 3:6]
        if "depth" in impose:
            sim.state.q[2] = run.q[k, 2]
            sim.state.v[2] = run.v[k, 2]
        out[k - k0] = sim.state.v[:6]
    return out


def scored_axes(run: Run, impose: tuple[str, ...] = ()) -> dict[str, int]:
    """The axes a window of ``run`` is scored on (module doc)."""
    axes = dict(AXES) if run.horizontal else {"w": 2, "r": 5}
    if "attitude" in impose:
        axes.pop("r", None)
    if "depth" in impose:
        axes.pop("w", None)
    return axes


def _speed(x: np.ndarray, axes: dict[str, int]) -> np.ndarray:
    linear = [i for i in axes.values() if i < 3]
    return np.linalg.norm(x[:, linear], axis=1)


def _dtw(x: np.ndarray | None, measured: np.ndarray, band: int | None) -> float:
    return np.inf if x is None else dtw_distance(x, measured, band)


def validate(
    system: System,
    runs: list[Run],
    seconds: float = 12.0,
    dt: float = 0.01,
    impose: tuple[str, ...] = (),
) -> list[WindowResult]:
    """Every whole window of every run, replayed (``replay_window``) and scored (module doc).
    A run with ``reversed_motors`` is replayed on the description with those motors reversed,
    one with a ``voltage`` with its thrusters on that supply.
    A window whose prediction stops being finite is kept with ``ok = False`` and infinite
    errors."""
    bad = [x for x in impose if x not in IMPOSABLE]
    if bad:
        raise ValueError(f"impose: {bad} not among {list(IMPOSABLE)}")
    sims: dict[tuple[frozenset[int] | None, float | None], Simulator] = {}
    results = []
    for run in runs:
        key = (run.reversed_motors, run.voltage)
        if key not in sims:
            vehicle = (
                system if run.reversed_motors is None else with_reversed_motors(system, run.reversed_motors)
            )
            sims[key] = Simulator.from_system(
                vehicle if run.voltage is None else with_supply_voltage(vehicle, run.voltage)
            )
        sim = sims[key]
        axes = scored_axes(run, impose)
        rate = 1.0 / float(np.median(np.diff(run.t)))
        n = max(2, round(seconds * rate))
        band = band_samples(WARP_BAND, 1.0 / rate)
        for k0 in range(0, len(run.t) - n + 1, n):
            meas = run.v[k0 : k0 + n]
            speed = _speed(meas, axes)
            const = np.repeat(meas[:1], n, axis=0)
            try:
                pred = replay_window(sim, run, k0, k0 + n, dt, impose)
                ok = bool(np.all(np.isfinite(pred)))
            except (ValueError, FloatingPointError):
                pred, ok = np.full_like(meas, np.inf), False
            series = (_speed(pred, axes) if ok else None, np.full(n, speed[0]), np.zeros(n))
            results.append(
                WindowResult(
                    run.name,
                    float(run.t[k0]),
                    _dtw(series[0], speed, band),
                    _dtw(series[1], speed, band),
                    _dtw(series[2], speed, band),
                    {a: rmse(pred[:, i], meas[:, i]) if ok else np.inf for a, i in axes.items()},
                    {a: rmse(const[:, i], meas[:, i]) for a, i in axes.items()},
                    {a: rmse(0.0 * meas[:, i], meas[:, i]) for a, i in axes.items()},
                    ok,
                    _dtw(series[0], speed, None),
                    pred,
                )
            )
    return results


def summary(results: list[WindowResult]) -> dict[str, float]:
    """Means over the windows: speed DTW (within the warp band, and unconstrained) of the
    model and of the two baselines, and the per-axis RMSE of the model and of the
    constant-velocity and zero-velocity baselines (over the windows that score that axis)."""
    out = {
        "windows": float(len(results)),
        "failed": float(sum(not r.ok for r in results)),
        "speed_dtw": float(np.mean([r.speed_dtw for r in results])) if results else np.nan,
        "constant_speed_dtw": float(np.mean([r.constant_speed_dtw for r in results])) if results else np.nan,
        "zero_speed_dtw": float(np.mean([r.zero_speed_dtw for r in results])) if results else np.nan,
        "warp_band": WARP_BAND,
    }
    out["unconstrained_speed_dtw"] = (
        float(np.mean([r.unconstrained_speed_dtw for r in results])) if results else np.nan
    )
    for a in AXES:
        scored = [r for r in results if a in r.rmse]
        if scored:
            out[f"rmse_{a}"] = float(np.mean([r.rmse[a] for r in scored]))
            out[f"constant_rmse_{a}"] = float(np.mean([r.constant_rmse[a] for r in scored]))
            out[f"zero_rmse_{a}"] = float(np.mean([r.zero_rmse[a] for r in scored]))
    return out


def format_summary(s: dict[str, float]) -> str:
    axes = [a for a in AXES if f"rmse_{a}" in s]

    def row(prefix: str) -> str:
        return " ".join(f"{a} {s[f'{prefix}rmse_{a}']:.3f}" for a in axes)

    beats = [a for a in axes if s[f"rmse_{a}"] < min(s[f"constant_rmse_{a}"], s[f"zero_rmse_{a}"])]
    speed_ok = s["speed_dtw"] < min(s["constant_speed_dtw"], s["zero_speed_dtw"])
    verdict = (
        f"the model beats both baselines on {'speed, ' if speed_ok else ''}{' '.join(beats) or 'nothing'}"
        if beats or speed_ok
        else "the model does not beat doing nothing on any axis"
    )
    return (
        f"{int(s['windows'])} windows ({int(s['failed'])} failed): speed DTW {s['speed_dtw']:.3f} m/s "
        f"(warp band +-{s['warp_band']:g} s; constant speed {s['constant_speed_dtw']:.3f}, zero speed "
        f"{s['zero_speed_dtw']:.3f}); RMSE {row('')} (constant velocity {row('constant_')}; zero velocity "
        f"{row('zero_')}); {verdict}; unconstrained speed DTW {s['unconstrained_speed_dtw']:.3f} "
        "(no warp band)"
    )
