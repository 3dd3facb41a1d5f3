"""Real ArduSub SITL's recorded manoeuvres (``test/data/ardusub_sitl_traces.json.gz``, recorded
by ``tools/ardusub_sitl_traces.py``, docs/ardusub_traces.md) and the same RC channels flown by
the emulated ArduSub on the same physics, with the quantities the tests compare."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from transforms3d.euler import quat2euler

from uvms_sim.actuators.althold import DepthSensing
from uvms_sim.actuators.ardusub import ArduSubEmulator, ModeGains, VehicleState, infer_frame
from uvms_sim.loop import steps_per
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.ros.parameters import PARAMETERS
from uvms_sim.simulator import Simulator

TRACES = Path(__file__).resolve().parent / "data" / "ardusub_sitl_traces.json.gz"
# the same ALT_HOLD dives with ArduPilot's parameter files as they are: SERVO8 the camera mount
TRACES_SERVO8_MOUNT = Path(__file__).resolve().parent / "data" / "ardusub_sitl_traces_servo8_mount.json.gz"
COLUMNS = ("t", "n", "e", "d", "roll", "pitch", "yaw", "u", "v", "w", "p", "q", "r")
# How the recorded ArduSub saw depth (``althold.DepthSensing.sitl``): SITL's depth sensor in
# water of 1024 kg/m^3, read as fresh water, undelayed under EKF3's 60 ms, and zeroed 2.47 m down
# (its depth estimate XKF1.PD against the simulated depth at rest, in the recording's dataflash
# log: PD = 1.0239 (d - 2.467) m over 1326 samples from 2.9 to 8.2 m, 7 mm of scatter; the 1.0239
# is SITL's 1024 x 9.80665 / 9800 = 1.0247 within the simulated depth's 1 cm steps)
SITL_GROUND_DEPTH = 2.467
SITL_SENSING = DepthSensing.sitl(SITL_GROUND_DEPTH)


def load_traces(path: Path = TRACES) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


@dataclass
class Trace:
    """One manoeuvre: its RC timeline and the vehicle's trace (columns ``COLUMNS`` then the
    eight servo outputs)."""

    name: str
    mode: str
    rc: list  # [[t, channels or None (not sent)], ...]
    data: np.ndarray

    def col(self, name: str) -> np.ndarray:
        return self.data[:, COLUMNS.index(name)]

    @property
    def t(self) -> np.ndarray:
        return self.data[:, 0]

    def stick_window(self) -> tuple[float, float]:
        """When the (only) non-neutral stick was applied and released."""
        on = [t for t, ch in self.rc if ch is not None and any(c != 1500 for c in ch[:6])]
        off = [t for t, ch in self.rc if t > on[0] and (ch is None or all(c == 1500 for c in ch[:6]))]
        return on[0], off[0]

    def at(self, name: str, t: float) -> float:
        return float(np.interp(t, self.t, self.col(name)))

    def mean(self, name: str, t0: float, t1: float) -> float:
        k = (self.t >= t0) & (self.t <= t1)
        return float(np.mean(self.col(name)[k]))


def recorded(manoeuvre: dict) -> Trace:
    return Trace(manoeuvre["name"], manoeuvre["mode"], manoeuvre["rc"], np.asarray(manoeuvre["trace"], float))


def fly_emulated(
    manoeuvre: dict,
    description: str = "bluerov2_heavy",
    gains: ModeGains | None = None,
    physics_rate: float = float(PARAMETERS["physics_rate"]),
    autopilot_rate: float = float(PARAMETERS["autopilot_rate"]),
    unassigned: tuple[int, ...] = (),
    sensing: DepthSensing = SITL_SENSING,
) -> tuple[Trace, ArduSubEmulator]:
    """The manoeuvre's RC timeline flown by the emulated ArduSub (armed, in its mode) from the
    recorded initial state, at the node's default physics and autopilot rates, seeing depth as
    the recorded ArduSub did (``sensing``); the trace at the recorded sample times.
    ``unassigned``: motors whose servo output has another function (they stay at 1500 us)."""
    sim = Simulator.from_system(load(resolve(description)))
    qs, vs = sim.model.q_slice(0), sim.model.v_slice(0)
    sim.state.q[qs] = manoeuvre["q0"]
    sim.state.v[vs] = manoeuvre["v0"]
    bank = sim.thrusters
    ap = ArduSubEmulator(
        infer_frame(list(bank.motors)) or "vectored",
        directions=bank.motor_directions(),
        gains=gains or ModeGains(),
        depth_sensing=sensing,
    )
    ap.arm()
    ap.set_mode("ALT_HOLD")  # where ArduSub held the vehicle before every manoeuvre
    ap.update(VehicleState.from_free_joint(sim.state.q[qs], sim.state.v[vs]), 1.0 / autopilot_rate)
    ap.set_mode(manoeuvre["mode"])
    dt = 1.0 / physics_rate
    every = steps_per(autopilot_rate, dt)
    times = np.asarray(manoeuvre["trace"], float)[:, 0]
    rc = [(t, ch) for t, ch in manoeuvre["rc"]]
    rows, k_rc, last_input = [], 0, 0.0
    outputs: dict[int, float] = {}
    n_steps = round(float(times[-1]) / dt) + 1
    sample = 0
    for k in range(n_steps + 1):
        t = k * dt
        while sample < len(times) and times[sample] <= t + 1e-9:
            q, v = sim.state.q[qs], sim.state.v[vs]
            yaw, pitch, roll = quat2euler(q[3:7], "rzyx")
            pwm = [outputs.get(m, 1500.0) for m in range(1, 9)]
            rows.append([times[sample], *q[:3], roll, pitch, yaw, *v, *pwm, float(ap.armed)])
            sample += 1
        if k % every == 0:
            while k_rc < len(rc) and rc[k_rc][0] <= t + 1e-9:
                if rc[k_rc][1] is not None:
                    ap.set_rc(rc[k_rc][1])
                k_rc += 1
            if rc and rc[min(k_rc, len(rc)) - 1][1] is not None:
                last_input = t
            if ap.armed and t - last_input > 3.0:  # FS_PILOT_TIMEOUT, as the node's shim does
                ap.lose_pilot_input()
            s = VehicleState.from_free_joint(sim.state.q[qs], sim.state.v[vs])
            outputs = ap.update(s, dt * every)
            outputs.update({m: 1500.0 for m in unassigned})
            bank.set_motor_pwm(outputs)
        sim.step(dt)
    return Trace(manoeuvre["name"], manoeuvre["mode"], manoeuvre["rc"], np.asarray(rows)), ap


def depth_rate(tr: Trace, t0: float, t1: float) -> float:
    """Mean depth rate (m/s, down positive) between t0 and t1."""
    return (tr.at("d", t1) - tr.at("d", t0)) / (t1 - t0)
