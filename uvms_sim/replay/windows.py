"""Windowed validation against real runs: every window of a run replayed from the measured
state, with the baselines a model must beat.

A run recorded on a vehicle that its autopilot stabilised cannot be replayed open loop for
minutes (the model's roll and depth drift without the controller); restarted from the
measured pose and velocity every ``seconds`` (12 s in Nielsen et al. 2018, section 4.2), the
body velocities it predicts on the recorded servo outputs say what the model is worth. For
each window: the speed error as the DTW distance between predicted and measured ``|v|``
(the mean point distance along the optimal alignment, ``compare.dtw_distance``) and the RMSE
of u, v, w and r, beside two baselines that need no model: the speed stays what it was at
the window's start (constant speed), and the vehicle stands still (zero speed).

Runs are read from CSV files of the form of the tank runs in ``../shared/real-data/osl_train``
(``read_run``): ``t, x, y, z, qw, qx, qy, qz, u, v, w, p, q, r, pwm1..pwmN`` with the pose in
a z-up (ENU) world, the velocities in body FLU axes and the servo outputs in microseconds.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..frames import body_frd_flu, position_enu_to_ned, quat_enu_flu_to_ned_frd
from ..model.system import System
from ..simulator import Simulator
from .compare import dtw_distance, rmse

AXES = {"u": 0, "v": 1, "w": 2, "r": 5}


@dataclass(frozen=True)
class Run:
    """A recorded run in the physics frames: time (s), free-joint configuration (NED position,
    FRD->NED quaternion), body velocity (FRD) and servo outputs (us), one row per sample."""

    name: str
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    pwm: np.ndarray


def read_run(path: str | Path, rate: float = 10.0) -> Run:
    """A CSV (or .csv.gz) run as described in the module doc; ``t`` is taken from the file's
    first column when it is uniform, else as sample index / ``rate``."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        header = f.readline().strip().split(",")
        data = np.loadtxt(f, delimiter=",", ndmin=2)
    col = {name: k for k, name in enumerate(header)}
    need = ["x", "y", "z", "qw", "qx", "qy", "qz", "u", "v", "w", "p", "q", "r"]
    missing = [n for n in need if n not in col]
    if missing:
        raise ValueError(f"{path}: columns {missing} missing (has {header})")
    servos = sorted((int(n[3:]), k) for n, k in col.items() if n.startswith("pwm") and n[3:].isdigit())
    if not servos:
        raise ValueError(f"{path}: no pwm1..pwmN columns")
    pos = data[:, [col["x"], col["y"], col["z"]]]
    quat = data[:, [col["qw"], col["qx"], col["qy"], col["qz"]]]
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    lin = data[:, [col["u"], col["v"], col["w"]]]
    ang = data[:, [col["p"], col["q"], col["r"]]]
    q = np.hstack([position_enu_to_ned(pos.T).T, np.array([quat_enu_flu_to_ned_frd(x) for x in quat])])
    v = np.hstack([body_frd_flu(lin.T).T, body_frd_flu(ang.T).T])
    pwm = np.zeros((len(data), servos[-1][0]))
    for n, k in servos:
        pwm[:, n - 1] = data[:, k]
    t = data[:, col["t"]] if "t" in col else np.arange(len(data)) / rate
    return Run(path.name.split(".")[0], t, q, v, pwm)


def with_reversed_motors(system: System, motors: set[int]) -> System:
    """The same description with the thrusters of these motor numbers reversed (ArduSub
    MOT_n_DIRECTION = -1), as the vehicle a run was recorded on was set up."""
    vehicles = tuple(
        replace(veh, thrusters=tuple(replace(t, reversed=t.motor in motors) for t in veh.thrusters))
        for veh in system.vehicles
    )
    return replace(system, vehicles=vehicles)


@dataclass
class WindowResult:
    run: str
    start: float
    speed_dtw: float
    constant_speed_dtw: float
    zero_speed_dtw: float
    rmse: dict[str, float]
    constant_rmse: dict[str, float]
    zero_rmse: dict[str, float]
    ok: bool = True


def replay_window(sim: Simulator, run: Run, k0: int, k1: int, dt: float) -> np.ndarray:
    """Body velocities (FRD) predicted at samples k0..k1-1, restarted from the measured state
    at k0 with the thrusters spun up to the command then, the recorded outputs held between
    samples."""
    s = sim.model.q_slice(0)
    q = sim.state.q.copy()
    q[s] = run.q[k0]
    v = np.zeros(sim.model.nv)
    v[:6] = run.v[k0]
    sim.reset(q, v)
    bank = sim.thrusters
    if bank is None:
        raise ValueError("replaying thruster commands needs a system with thrusters")
    bank.set_motor_pwm(run.pwm[k0])
    bank.n[:] = bank.shaft_speed_targets()
    out = np.empty((k1 - k0, 6))
    out[0] = sim.state.v[:6]
    for k in range(k0 + 1, k1):
        bank.set_motor_pwm(run.pwm[k - 1])
        h = run.t[k] - run.t[k - 1]
        steps = max(1, round(h / dt))
        sim.advance(h / steps, steps)
        out[k - k0] = sim.state.v[:6]
    return out


def validate(system: System, runs: list[Run], seconds: float = 12.0, dt: float = 0.01) -> list[WindowResult]:
    """Every whole window of every run, replayed (``replay_window``) and scored (module doc).
    A window whose prediction stops being finite is kept with ``ok = False`` and infinite
    errors."""
    sim = Simulator.from_system(system)
    results = []
    for run in runs:
        rate = 1.0 / float(np.median(np.diff(run.t)))
        n = max(2, round(seconds * rate))
        for k0 in range(0, len(run.t) - n + 1, n):
            meas = run.v[k0 : k0 + n]
            speed = np.linalg.norm(meas[:, :3], axis=1)
            const = np.repeat(meas[:1], n, axis=0)
            try:
                pred = replay_window(sim, run, k0, k0 + n, dt)
                ok = bool(np.all(np.isfinite(pred)))
            except ValueError:
                pred, ok = np.full_like(meas, np.inf), False
            p_speed = np.linalg.norm(pred[:, :3], axis=1)
            results.append(
                WindowResult(
                    run.name,
                    float(run.t[k0]),
                    dtw_distance(p_speed, speed) if ok else np.inf,
                    dtw_distance(np.full(n, speed[0]), speed),
                    dtw_distance(np.zeros(n), speed),
                    {a: rmse(pred[:, i], meas[:, i]) if ok else np.inf for a, i in AXES.items()},
                    {a: rmse(const[:, i], meas[:, i]) for a, i in AXES.items()},
                    {a: rmse(0.0 * meas[:, i], meas[:, i]) for a, i in AXES.items()},
                    ok,
                )
            )
    return results


def summary(results: list[WindowResult]) -> dict[str, float]:
    """Means over the windows: speed DTW of the model and of the two baselines, and the
    per-axis RMSE of the model and of the constant-velocity and zero-velocity baselines."""
    out = {
        "windows": float(len(results)),
        "failed": float(sum(not r.ok for r in results)),
        "speed_dtw": float(np.mean([r.speed_dtw for r in results])),
        "constant_speed_dtw": float(np.mean([r.constant_speed_dtw for r in results])),
        "zero_speed_dtw": float(np.mean([r.zero_speed_dtw for r in results])),
    }
    for a in AXES:
        out[f"rmse_{a}"] = float(np.mean([r.rmse[a] for r in results]))
        out[f"constant_rmse_{a}"] = float(np.mean([r.constant_rmse[a] for r in results]))
        out[f"zero_rmse_{a}"] = float(np.mean([r.zero_rmse[a] for r in results]))
    return out


def format_summary(s: dict[str, float]) -> str:
    axes = " ".join(f"{a} {s[f'rmse_{a}']:.3f}" for a in AXES)
    const = " ".join(f"{a} {s[f'constant_rmse_{a}']:.3f}" for a in AXES)
    zero = " ".join(f"{a} {s[f'zero_rmse_{a}']:.3f}" for a in AXES)
    return (
        f"{int(s['windows'])} windows ({int(s['failed'])} failed): speed DTW {s['speed_dtw']:.3f} m/s "
        f"(constant speed {s['constant_speed_dtw']:.3f}, zero speed {s['zero_speed_dtw']:.3f}); "
        f"RMSE {axes} (constant velocity {const}; zero velocity {zero})"
    )
