"""How a fast Reach Alpha 5 motion disturbs a BlueROV2 Heavy that ArduSub holds (docs/arm.md).

The BlueROV2 Heavy with the Alpha 5 (config/bluerov2_heavy_alpha5.yaml), flown by the emulated
ArduSub (uvms_sim.actuators.ardusub, the autopilot behind the node's MAVROS interface) in
ALT_HOLD or STABILIZE with the sticks neutral, its arm driven by the Alpha 5's firmware servos
(uvms_sim.actuators.servo) through a 3 s rest-to-rest quintic move of the shoulder, elbow and base
(+0.75 rad each: the 0.5 rad/s joint speed limit at the quintic's peak) and back. Reported: the
vehicle's depth, roll, pitch and yaw excursions against the same run with the arm still (so
that the slow drift of STABILIZE, which holds no depth, is taken out), and the joint torques of
the move against those the same move needs on a fixed base (config/alpha5.yaml): what a
controller designed under a fixed-base assumption would expect.

Usage: ``python tools/arm_coupling.py [--mode ALT_HOLD STABILIZE] [--rate 1000]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from transforms3d.euler import quat2euler

from uvms_sim.actuators.ardusub import ArduSubEmulator, VehicleState
from uvms_sim.actuators.servo import JointServos, alpha5_specs
from uvms_sim.dynamics.rnea import rnea
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

MOVE = {"alpha_5_axis_e": 0.75, "alpha_5_axis_d": 0.75, "alpha_5_axis_c": 0.75}
DURATION = 3.0  # s, each way
SETTLE = 5.0  # s before the move
AFTER = 4.0  # s after the return


def quintic(s: float) -> tuple[float, float]:
    """Rest-to-rest quintic of s in [0, 1]: value and derivative (per unit of s)."""
    s = min(max(s, 0.0), 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5, 30 * s**2 - 60 * s**3 + 30 * s**4


def reference(t: float, q0: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """Out (0..3 s after SETTLE) and back (3..6 s): positions and velocities."""
    tau = t - SETTLE
    if tau < DURATION:
        x, dx = quintic(tau / DURATION)
    else:
        x, dx = quintic((tau - DURATION) / DURATION)
        x, dx = 1.0 - x, -dx
    if tau < 0.0:
        x, dx = 0.0, 0.0
    pos = {n: q0[n] + MOVE.get(n, 0.0) * x for n in q0}
    vel = {n: MOVE.get(n, 0.0) * dx / DURATION for n in q0}
    return pos, vel


def servos_for(sim: Simulator, q: np.ndarray) -> JointServos:
    model = sim.model
    servos = JointServos(model, alpha5_specs(model), q=q)
    zero = np.zeros(model.nv)
    servos.preload(rnea(model, model.create_data(), q, zero, zero, sim.env)[servos.iv])
    sim.joint_motors = servos
    return servos


def run(mode: str | None, move: bool, rate: float) -> dict[str, np.ndarray]:
    """One run: the vehicle's depth and attitude and the joint torques over time. ``mode`` None:
    the arm on its fixed base (alpha5.yaml)."""
    system = load(resolve("bluerov2_heavy_alpha5" if mode else "alpha5"))
    sim = Simulator.from_system(system)
    servos = servos_for(sim, system.initial_q)
    q0 = {n: float(system.initial_q[servos.iq[k]]) for k, n in enumerate(servos.names)}
    dt = 1.0 / rate
    autopilot, root = None, None
    if mode:
        bank = sim.thrusters
        autopilot = ArduSubEmulator("vectored_6dof", directions=bank.motor_directions())
        autopilot.arm(True)
        autopilot.set_mode(mode)
        root = 0
    autopilot_every = max(1, round(rate / 400.0))  # ArduSub's 400 Hz loop
    steps = round((SETTLE + 2 * DURATION + AFTER) / dt)
    out: dict[str, list] = {"t": [], "depth": [], "rpy": [], "tau": []}
    for k in range(steps):
        t = k * dt
        if move:
            pos, vel = reference(t, q0)
            servos.command("position", pos, vel)
        if autopilot is not None and k % autopilot_every == 0:
            s = sim.model.q_slice(root)
            state = VehicleState.from_free_joint(sim.state.q[s], sim.state.v[sim.model.v_slice(root)])
            outputs = autopilot.update(state, dt * autopilot_every)
            pwm = sim.thrusters.pwm.copy()
            for motor, value in outputs.items():
                pwm[sim.thrusters.motors.index(motor)] = value
            sim.thrusters.set_pwm(pwm)
        sim.step(dt)
        out["t"].append(t)
        out["tau"].append(servos.effort.copy())
        if mode:
            q = sim.state.q
            out["depth"].append(q[2])
            out["rpy"].append(quat2euler(q[3:7]))
    return {k: np.array(v) for k, v in out.items()}


def report(mode: str, rate: float, fixed: dict[str, np.ndarray]) -> None:
    moved, still = run(mode, True, rate), run(mode, False, rate)
    window = moved["t"] >= SETTLE
    dz = (moved["depth"] - still["depth"])[window]
    drpy = np.degrees(np.unwrap(moved["rpy"], axis=0) - np.unwrap(still["rpy"], axis=0))[window]
    print(
        f"{mode}: depth excursion {dz.min() * 100:+.1f} / {dz.max() * 100:+.1f} cm; "
        f"roll {np.abs(drpy[:, 0]).max():.2f} deg, pitch {np.abs(drpy[:, 1]).max():.2f} deg, "
        f"yaw {np.abs(drpy[:, 2]).max():.2f} deg (max against the arm held still)"
    )
    dtau = moved["tau"][window, :4] - fixed["tau"][window, :4]
    diff = ", ".join(f"{x:.3f}" for x in np.abs(dtau).max(axis=0))
    peaks = ", ".join(f"{x:.3f}" for x in np.abs(fixed["tau"][window, :4]).max(axis=0))
    print(f"{mode}: joint torques E D C B on the vehicle minus on a fixed base: max {diff} N m")
    print(f"{mode}: (fixed-base peaks {peaks} N m)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mode", nargs="+", default=["ALT_HOLD", "STABILIZE"])
    parser.add_argument("--rate", type=float, default=1000.0, help="physics rate, Hz")
    args = parser.parse_args(argv)
    fixed = run(None, True, args.rate)
    for mode in args.mode:
        report(mode, args.rate, fixed)


if __name__ == "__main__":
    main()
