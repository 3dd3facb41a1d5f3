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

With ``--ardusub PATH --defaults FILES`` the same experiment is flown by a real ArduSub SITL
instead (ArduPilot is not part of this project: build it from ArduPilot's source yourself):
per mode, two sessions of the given ``ardusub`` binary (``-I`` ``--instance``, ``--model
JSON:127.0.0.1``, a sea-level home, a wiped parameter store, ``SIM_RC_FAIL 1``, SERVO8 on
motor 8 and the thruster bank's MOT_n_DIRECTION), one with the move and one with the arm
still, on the physics served in this process by the SITL JSON backend
(uvms_sim.hil.sitl_json, on 9002 + 10 ``--instance``), the arm's servos commanded from the
reference before every frame. A ground station (tools/ardusub_sitl_check.py's, MAVLink on TCP
5760 + 10 ``--instance``, neutral MANUAL_CONTROL) lets the EKF settle for 30 s, arms in
MANUAL, takes the mode and waits ``SITL_SETTLE`` s before the move. The two sessions are not
the same run (SITL's sensor noise differs), so each is taken relative to its state when the
move starts, and the still session's own excursion (the floor) is printed too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
from ardusub_sitl_check import HOME, MANUAL, GroundStation, Physics, fly, set_mode, stop_ardusub
from ardusub_sitl_traces import MODES
from pymavlink import mavutil
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
SITL_SETTLE = 10.0  # s in the mode before the move, with a real ArduSub (from MANUAL, nose down)


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


class ArmPhysics(Physics):
    """The SITL backend served in a thread (tools/ardusub_sitl_check.py's), the arm's servos
    commanded from the reference before every frame once ``move_at`` (physics time) is set:
    SITL's frames are at most the backend's 2.5 ms step, so one physics step each."""

    def __init__(self, port: int, move: bool) -> None:
        system = load(resolve("bluerov2_heavy_alpha5"))
        sim = Simulator.from_system(system)
        self.servos = servos_for(sim, system.initial_q)
        self.q0 = {n: float(system.initial_q[self.servos.iq[k]]) for k, n in enumerate(self.servos.names)}
        self.move = move
        self.move_at: float | None = None
        super().__init__("bluerov2_heavy_alpha5", port=port, sim=sim)

    def run(self) -> None:
        b = self.backend
        s, sv = b.sim.model.q_slice(b.root), b.sim.model.v_slice(b.root)
        while not self.stop.is_set():
            if self.move and self.move_at is not None:
                pos, vel = reference(b.sim.state.t - self.move_at + SETTLE, self.q0)
                self.servos.command("position", pos, vel)
            if b.serve_once(0.05):
                st = b.sim.state
                self.history.append((st.t, st.q[s].copy(), st.v[sv].copy()))


def vehicle_parm(path: str, physics: Physics) -> None:
    """The vehicle's own parameters after ArduSub's defaults: no RC receiver (as on a real
    BlueROV2), motor 8 on SERVO8 (sub.parm gives it to the camera mount) and the reversed motors."""
    bank = physics.backend.bank
    lines = ["SIM_RC_FAIL 1"] + (["SERVO8_FUNCTION 40"] if 8 in bank.motors else [])
    lines += [f"MOT_{m}_DIRECTION {int(d)}" for m, d in sorted(bank.motor_directions().items())]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_ardusub(args: argparse.Namespace, mode: str, move: bool) -> dict:
    """One real ArduSub SITL session: the EKF settles, MANUAL arm, ``mode``, ``SITL_SETTLE`` s,
    then the move (or the arm held still) and ``AFTER`` s. The vehicle's history and the physics
    time the move started at."""
    physics = ArmPhysics(9002 + 10 * args.instance, move)
    physics.start()
    workdir = tempfile.mkdtemp(prefix="arm_coupling_")
    extra = os.path.join(workdir, "vehicle.parm")
    vehicle_parm(extra, physics)
    cmd = [args.ardusub, "-I", str(args.instance), "--model", "JSON:127.0.0.1",
           "--defaults", f"{args.defaults},{extra}", "--home", HOME, "-w",
           "--speedup", str(args.speedup)]  # fmt: skip
    with open(os.path.join(workdir, "ardusub.log"), "w") as log:
        sitl = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    wall0 = time.monotonic()
    gcs: GroundStation | None = None
    try:
        mav = mavutil.mavlink_connection(
            f"tcp:127.0.0.1:{5760 + 10 * args.instance}", source_system=255, autoreconnect=True
        )
        mav.wait_heartbeat(timeout=120)
        gcs = GroundStation(mav, physics)
        gcs.start()
        while not physics.history:
            time.sleep(0.1)
        fly(mav, physics, 30.0, gcs)  # the EKF settles
        set_mode(mav, physics, MANUAL, gcs)
        for _attempt in range(40):
            gcs.send(lambda m: m.arducopter_arm())
            fly(mav, physics, 1.0, gcs)
            if mav.motors_armed():
                break
        else:
            raise RuntimeError(f"ArduSub refused to arm (its output: {workdir}/ardusub.log)")
        set_mode(mav, physics, MODES[mode], gcs)
        fly(mav, physics, SITL_SETTLE, gcs)
        physics.move_at = t0 = physics.now()[0]
        fly(mav, physics, 2 * DURATION + AFTER, gcs)
        armed = bool(mav.motors_armed())
        c = physics.backend.counters
        history = list(physics.history)  # the thread goes on appending to it
        t = np.array([h[0] for h in history])
        return {
            "t0": t0,
            "t": t,
            "depth": np.array([h[1][2] for h in history]),
            "rpy": np.array([quat2euler(h[1][3:7]) for h in history]),
            "armed": armed,
            "wall": time.monotonic() - wall0,
            "frames": c.frames,
            "resends": c.resends,
            "lost": c.lost,
            "frame_dt": float(np.median(np.diff(t))),
        }
    finally:
        if gcs is not None:
            gcs.stop()
        stop_ardusub(sitl)
        physics.close()


def relative(run: dict, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depth (m) and roll, pitch, yaw (deg) at ``tau`` after the move's start, less their values then."""
    t = run["t0"] + tau
    depth = np.interp(t, run["t"], run["depth"])
    rpy = np.unwrap(run["rpy"], axis=0)
    rpy = np.degrees(np.column_stack([np.interp(t, run["t"], rpy[:, i]) for i in range(3)]))
    return depth - depth[0], rpy - rpy[0]


def excursion(dz: np.ndarray, drpy: np.ndarray) -> str:
    return (
        f"depth excursion {dz.min() * 100:+.1f} / {dz.max() * 100:+.1f} cm; "
        f"roll {np.abs(drpy[:, 0]).max():.2f} deg, pitch {np.abs(drpy[:, 1]).max():.2f} deg, "
        f"yaw {np.abs(drpy[:, 2]).max():.2f} deg"
    )


def report_ardusub(args: argparse.Namespace, mode: str) -> None:
    moved, still = run_ardusub(args, mode, True), run_ardusub(args, mode, False)
    tau = np.arange(0.0, 2 * DURATION + AFTER, 0.005)
    (zm, am), (zs, as_) = relative(moved, tau), relative(still, tau)
    print(f"{mode} (ArduSub SITL): {excursion(zm - zs, am - as_)} (max against the arm held still)")
    print(f"{mode} (ArduSub SITL): arm still, from the move's start: {excursion(zs, as_)}")
    for name, r in (("move", moved), ("still", still)):
        print(
            f"{mode} (ArduSub SITL): {name} session: {r['t'][-1]:.1f} s physics in {r['wall']:.1f} s wall, "
            f"frames {r['frames']} of {r['frame_dt'] * 1000:.2f} ms, resends {r['resends']}, "
            f"lost {r['lost']}, armed at the end {r['armed']}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mode", nargs="+", default=["ALT_HOLD", "STABILIZE"])
    parser.add_argument("--rate", type=float, default=1000.0, help="physics rate, Hz")
    parser.add_argument("--ardusub", help="a real ArduSub SITL binary to fly instead of the emulation")
    parser.add_argument("--defaults", help="with --ardusub: its default_params files, comma separated")
    parser.add_argument("--instance", type=int, default=0, help="with --ardusub: SITL -I (ports + 10 k)")
    parser.add_argument("--speedup", type=float, default=1.0, help="with --ardusub: SITL --speedup")
    args = parser.parse_args(argv)
    if args.ardusub:
        if not args.defaults:
            parser.error("--ardusub needs --defaults (sub.parm,sub-6dof.parm for the Heavy)")
        for mode in args.mode:
            report_ardusub(args, mode)
        return
    fixed = run(None, True, args.rate)
    for mode in args.mode:
        report(mode, args.rate, fixed)


if __name__ == "__main__":
    main()
