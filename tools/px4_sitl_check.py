"""Fly a real PX4 SITL on uvms_sim's physics through the MAVLink HIL bridge (docs/px4.md).

    .venv/bin/python tools/px4_sitl_check.py --px4 ~/PX4-Autopilot/build/px4_sitl_default

PX4 is not part of this project: build it for SITL from PX4-Autopilot's source yourself
(``make px4_sitl_default``). This script serves the bridge in lock-step over
``tcpin:127.0.0.1:4560`` in this process (the truth is recorded at every step), starts PX4 as a
child process in a temporary working directory (``PX4_SYS_AUTOSTART``, default 1022, the
BlueROV2 Heavy; ``PX4_SIMULATOR=none``: PX4's simulator_mavlink connects to the bridge), and
talks MAVLink to it over UDP 14550 with pymavlink as a ground station does. A first boot sets
the estimator parameters (PX4's UUV defaults fuse external vision; here GPS and the
barometer: ``EKF2_GPS_CTRL 7``, ``EKF2_HGT_REF 0``, ``EKF2_EV_CTRL 0``), PX4 saves them; the
second boot waits for the preflight checks, records every STATUSTEXT, arms and flies with
MANUAL_CONTROL at 20 Hz: MANUAL forward and yaw, POSCTL hold, forward, dive and yaw, ALTCTL
forward, then disarms. It prints one table (PX4's estimate against the truth, speeds, yaw
rates, depth changes, real-time factor); the exit status is 1 if a check fails.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("MAVLINK20", "1")

import numpy as np
from pymavlink import mavutil
from transforms3d.euler import quat2euler

from uvms_sim.hil.hil_sensors import GpsSpec
from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

MANUAL, ALTCTL, POSCTL = 1, 2, 3  # PX4 main modes (custom_mode bits 16-23)
ESTIMATOR = {"EKF2_GPS_CTRL": 7, "EKF2_HGT_REF": 0, "EKF2_EV_CTRL": 0, "EKF2_BARO_CTRL": 1}
mavlink = mavutil.mavlink


class Physics(threading.Thread):
    """The bridge serving PX4 in lock-step, the truth recorded after every step."""

    def __init__(self, description: str, speed: float, motors: str, gps: GpsSpec) -> None:
        super().__init__(daemon=True)
        sim = Simulator.from_system(load(resolve(description)))
        self.bridge = MavlinkHil(sim, "tcpin:127.0.0.1:4560", motors=motors, gps=gps)
        self.speed = speed
        self.history: list[tuple[float, float, np.ndarray]] = []  # (t, wall, q root)
        self.pwm: list[np.ndarray] = []  # the thrusters' PWM after every step
        self.times = np.zeros(0)  # the history's times, as an array (truth_at)
        advance = self.bridge.advance

        def recorded(dt: float) -> None:
            advance(dt)
            if self.history and sim.state.t < self.history[-1][0]:  # a new PX4 session
                self.history.clear()
                self.pwm.clear()
            self.history.append((sim.state.t, time.monotonic(), sim.state.q[:7].copy()))
            self.pwm.append(sim.thrusters.pwm.copy())

        self.bridge.advance = recorded  # type: ignore[method-assign]

    def run(self) -> None:
        self.bridge.serve(speed=self.speed)

    def now(self) -> tuple[float, float, np.ndarray]:
        while not self.history:
            time.sleep(0.01)
        return self.history[-1]


def start_px4(build: Path, workdir: Path, airframe: int) -> subprocess.Popen:
    env = dict(os.environ, PX4_SYS_AUTOSTART=str(airframe), PX4_SIMULATOR="none")
    log = open(workdir / "px4.log", "ab")  # the child writes it
    command = [str(build / "bin" / "px4"), "-d", "-w", str(workdir), str(build / "etc")]
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)


def stop_px4(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Gcs:
    """A ground station on PX4 SITL's GCS link (PX4 sends to UDP 14550)."""

    def __init__(self, port: int = 14550) -> None:
        self.mav = mavutil.mavlink_connection(f"udpin:127.0.0.1:{port}", source_system=255)
        self.texts: list[tuple[int, str]] = []
        self.last: dict[str, object] = {}
        self.log: list[tuple[float, object]] = []
        self.beat = 0.0

    def wait_heartbeat(self, timeout: float = 120.0) -> None:
        if self.mav.wait_heartbeat(timeout=timeout) is None:
            raise TimeoutError("no heartbeat from PX4")

    def pump(self, physics: Physics, seconds: float = 0.02) -> None:
        end = time.monotonic() + seconds
        if time.monotonic() > self.beat + 1.0:  # a ground station's heartbeat, 1 Hz
            self.mav.mav.heartbeat_send(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)
            self.beat = time.monotonic()
        while time.monotonic() < end:
            msg = self.mav.recv_match(blocking=True, timeout=0.01)
            if msg is None:
                continue
            kind = msg.get_type()
            self.last[kind] = msg
            if kind == "STATUSTEXT":
                self.texts.append((msg.severity, msg.text))
            elif kind in ("LOCAL_POSITION_NED", "ATTITUDE"):
                self.log.append((physics.now()[0], msg))

    def sticks(self, x: int = 0, y: int = 0, z: int = 500, r: int = 0) -> None:
        self.mav.mav.manual_control_send(self.mav.target_system, x, y, z, r, 0)

    def command(self, physics: Physics, command: int, *params: float, timeout: float = 10.0) -> int:
        p = [*params, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0][:7]
        self.mav.mav.command_long_send(self.mav.target_system, self.mav.target_component, command, 0, *p)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.sticks()
            self.pump(physics, 0.05)
            ack = self.last.pop("COMMAND_ACK", None)
            if ack is not None and ack.command == command:
                return int(ack.result)
        return -1

    def set_param(self, physics: Physics, name: str, value: int) -> bool:
        """PARAM_SET of an INT32 parameter, bytewise as PX4 encodes them (the int's bytes in the
        float field); True once PX4 echoes the value."""
        as_float = struct.unpack("<f", struct.pack("<i", value))[0]
        target = (self.mav.target_system, self.mav.target_component)
        for _ in range(5):
            self.mav.mav.param_set_send(*target, name.encode(), as_float, mavlink.MAV_PARAM_TYPE_INT32)
            end = time.monotonic() + 2.0
            while time.monotonic() < end:
                self.pump(physics, 0.05)
                got = self.last.get("PARAM_VALUE")
                if got is not None and got.param_id == name:
                    echoed = struct.unpack("<i", struct.pack("<f", got.param_value))[0]
                    if echoed == value:
                        return True
        return False


def fly(gcs: Gcs, physics: Physics, seconds: float, **sticks) -> tuple[float, float]:
    """Hold the sticks for ``seconds`` of simulated time (MANUAL_CONTROL at 20 Hz of simulated
    time); the simulated and wall time it took."""
    t0, w0, _ = physics.now()
    next_send = t0
    while physics.now()[0] < t0 + seconds:
        if physics.now()[0] >= next_send:
            gcs.sticks(**sticks)
            next_send += 0.05
        gcs.pump(physics, 0.01)
    t1, w1, _ = physics.now()
    return t1 - t0, w1 - w0


def truth_at(physics: Physics, t: float) -> np.ndarray:
    """The recorded root configuration at simulated time ``t`` (the first step at or after it)."""
    n = len(physics.history)
    if len(physics.times) != n:
        physics.times = np.array([h[0] for h in physics.history])
    return physics.history[int(np.clip(np.searchsorted(physics.times, t), 0, n - 1))][2]


def yaw_of(q: np.ndarray) -> float:
    return quat2euler(q[3:7])[2]


def phase(physics: Physics, gcs: Gcs, name: str, seconds: float, **sticks) -> dict:
    """Fly one phase; the truth's displacement in the heading the vehicle had at its start
    (forward, right, down), its mean horizontal speed and yaw rate, and the largest thruster
    command PX4 gave (us from 1500)."""
    t0 = physics.now()[0]
    k0 = len(physics.pwm)
    q0 = truth_at(physics, t0)
    sim_s, wall_s = fly(gcs, physics, seconds, **sticks)
    q1 = truth_at(physics, physics.now()[0])
    d = q1[:3] - q0[:3]
    c, s_ = math.cos(yaw_of(q0)), math.sin(yaw_of(q0))
    forward, right = c * d[0] + s_ * d[1], -s_ * d[0] + c * d[1]
    dyaw = (yaw_of(q1) - yaw_of(q0) + math.pi) % (2 * math.pi) - math.pi
    pwm = np.array(physics.pwm[k0:]) if len(physics.pwm) > k0 else np.full((1, 1), 1500.0)
    return {"phase": name, "sim": sim_s, "wall": wall_s, "forward": forward, "side": right,
            "down": float(d[2]), "speed": float(np.linalg.norm(d[:2]) / sim_s),
            "yaw_rate": math.degrees(dyaw) / sim_s, "pwm": float(np.abs(pwm - 1500.0).max())}  # fmt: skip


def estimate_errors(physics: Physics, gcs: Gcs, since: float) -> tuple[float, float, float]:
    """PX4's LOCAL_POSITION_NED against the truth since ``since`` (both as displacements from
    their values at ``since``): RMS and max horizontal error (m), RMS vertical error (m)."""
    pos = [(t, m) for t, m in gcs.log if t >= since and m.get_type() == "LOCAL_POSITION_NED"]
    if len(pos) < 2:
        return math.nan, math.nan, math.nan
    t0, m0 = pos[0]
    e0, q0 = np.array([m0.x, m0.y, m0.z]), truth_at(physics, t0)[:3]
    errs = np.array([(np.array([m.x, m.y, m.z]) - e0) - (truth_at(physics, t)[:3] - q0) for t, m in pos])
    h = np.linalg.norm(errs[:, :2], axis=1)
    return float(np.sqrt(np.mean(h**2))), float(h.max()), float(np.sqrt(np.mean(errs[:, 2] ** 2)))


def report(results: list[dict], physics: Physics, gcs: Gcs, t_arm: float, boot: tuple[float, float]) -> None:
    end_sim, end_wall, _ = physics.now()
    h_rms, h_max, v_rms = estimate_errors(physics, gcs, t_arm)
    att = [(t, m) for t, m in gcs.log if t >= t_arm and m.get_type() == "ATTITUDE"]
    yaw_err = [(m.yaw - yaw_of(truth_at(physics, t)) + math.pi) % (2 * math.pi) - math.pi for t, m in att]
    heading = math.degrees(float(np.sqrt(np.mean(np.square(yaw_err))))) if yaw_err else math.nan
    print(f"\n{'phase':32s} {'sim s':>5s} {'fwd m':>6s} {'right m':>7s} {'down m':>6s} {'m/s':>5s} "
          f"{'deg/s':>6s} {'max |pwm-1500|':>14s}")  # fmt: skip
    for r in results:
        print(f"{r['phase']:32s} {r['sim']:5.1f} {r['forward']:6.2f} {r['side']:7.2f} {r['down']:6.2f} "
              f"{r['speed']:5.2f} {r['yaw_rate']:6.1f} {r['pwm']:14.0f}")  # fmt: skip
    rtf = (end_sim - boot[0]) / (end_wall - boot[1])
    print(f"\nPX4's estimate vs truth since arming: horizontal RMS {h_rms:.3f} m (max {h_max:.3f} m), "
          f"vertical RMS {v_rms:.3f} m, heading RMS {heading:.2f} deg")  # fmt: skip
    print(f"real-time factor {rtf:.2f}: {end_sim - boot[0]:.0f} s simulated in {end_wall - boot[1]:.0f} s "
          f"(PX4 and the physics in lock-step; {physics.bridge.waits:.0f} s waiting for PX4)")  # fmt: skip


def set_estimator(args, physics: Physics, gcs: Gcs, workdir: Path) -> bool:
    """Boot 1: the estimator parameters, which PX4 saves in its working directory."""
    px4 = start_px4(args.px4, workdir, args.airframe)
    try:
        gcs.wait_heartbeat()
        ok = True
        for name, value in ESTIMATOR.items():
            if not gcs.set_param(physics, name, value):
                print(f"PX4 did not take {name} = {value}")
                ok = False
        fly(gcs, physics, 2.0)
    finally:
        stop_px4(px4)
    return ok


def checks_said(workdir: Path) -> list[str]:
    """What PX4's health and arming checks printed on its console since its last start."""
    text = (workdir / "px4.log").read_text(errors="replace").split("px4 starting.")[-1]
    return [
        line.strip()
        for line in text.splitlines()
        if "[health_and_arming_checks]" in line or "failed:" in line
    ]


def failing_flags(build: Path) -> list[str]:
    """PX4's failsafe flags that are set (its ``listener`` client, for the report)."""
    listener = [str(build / "bin" / "px4-listener"), "failsafe_flags"]
    out = subprocess.run(listener, capture_output=True, text=True, check=False)
    return [line.split(":")[0].strip() for line in out.stdout.splitlines() if line.strip().endswith("True")]


def wait_ready(physics: Physics, gcs: Gcs) -> bool:
    """Until PX4's prearm checks pass (SYS_STATUS) and at least 20 s of simulated time have
    passed (EKF2 wants 10 s of good GPS); False after 90 s."""
    deadline = physics.now()[0] + 90.0
    while physics.now()[0] < deadline:
        fly(gcs, physics, 1.0)
        status = gcs.last.get("SYS_STATUS")
        prearm = mavlink.MAV_SYS_STATUS_PREARM_CHECK
        if status is not None and status.onboard_control_sensors_health & prearm and physics.now()[0] > 20.0:
            return True
    return False


def flight(physics: Physics, gcs: Gcs) -> tuple[list[dict], bool]:
    results, ok = [], True
    for name, mode in (("MANUAL", MANUAL), ("POSCTL", POSCTL), ("ALTCTL", ALTCTL)):
        result = gcs.command(physics, mavlink.MAV_CMD_DO_SET_MODE, 1, mode)
        print(f"{name}: {'accepted' if result == 0 else f'refused ({result})'}")
        if result != 0:
            print(f"  failsafe flags set: {failing_flags(Path(os.environ['PX4_BUILD']))}")
            ok = False
            continue
        if mode == MANUAL:
            armed = gcs.command(physics, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 1)
            print(f"arm in MANUAL: {'accepted' if armed == 0 else f'refused ({armed})'}")
            if armed != 0:
                return results, False
            results.append(phase(physics, gcs, "MANUAL forward (throttle +1)", 10.0, z=1000))
            results.append(phase(physics, gcs, "MANUAL yaw (+1)", 10.0, r=1000))
        elif mode == POSCTL:
            results.append(phase(physics, gcs, "POSCTL hold", 10.0))
            results.append(phase(physics, gcs, "POSCTL forward (pitch +1)", 10.0, x=1000))
            results.append(phase(physics, gcs, "POSCTL dive (throttle -1)", 5.0, z=0))
            results.append(phase(physics, gcs, "POSCTL yaw (+1)", 5.0, r=1000))
            results.append(phase(physics, gcs, "POSCTL hold after", 5.0))
        else:
            results.append(phase(physics, gcs, "ALTCTL forward (throttle +1)", 10.0, z=1000))
    gcs.command(physics, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0)
    return results, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--px4", required=True, type=Path, help="PX4's SITL build directory (build/px4_sitl_default)"
    )
    ap.add_argument("--airframe", type=int, default=1022, help="PX4_SYS_AUTOSTART (default 1022)")
    ap.add_argument("--motors", default="px4-1022", help="the bridge's motor map (default px4-1022)")
    ap.add_argument("--description", default="bluerov2_heavy")
    ap.add_argument("--speed", type=float, default=1.0, help="at most this x real time (0: no limit)")
    ap.add_argument("--underwater-gps", default="acoustic", choices=("nofix", "acoustic"))
    args = ap.parse_args()
    if not (args.px4 / "bin" / "px4").exists():
        print(
            f"error: no {args.px4 / 'bin' / 'px4'}: build PX4 SITL (make px4_sitl_default)", file=sys.stderr
        )
        return 2
    os.environ["PX4_BUILD"] = str(args.px4)
    physics = Physics(args.description, args.speed, args.motors, GpsSpec(underwater=args.underwater_gps))
    physics.start()
    workdir = Path(tempfile.mkdtemp(prefix="px4_sitl_check_"))
    gcs = Gcs()
    px4: subprocess.Popen | None = None
    try:
        ok = set_estimator(args, physics, gcs, workdir)
        sessions = physics.bridge.sessions
        px4 = start_px4(args.px4, workdir, args.airframe)  # boot 2: fly
        while physics.bridge.sessions == sessions:
            time.sleep(0.1)
        gcs.texts.clear()
        gcs.wait_heartbeat()
        boot = physics.now()[:2]
        ready = wait_ready(physics, gcs)
        booting = checks_said(workdir)
        fly(gcs, physics, 5.0)
        warnings = [t for s, t in gcs.texts if s <= mavlink.MAV_SEVERITY_WARNING]
        at_arming = checks_said(workdir)[len(booting) :]
        print(f"PX4 prearm checks {'pass' if ready else 'FAIL'} at t = {physics.now()[0]:.1f} s")
        print(f"  said while EKF2 aligned: {booting or 'nothing'}")
        print(
            f"  said in the 5 s before arming: {at_arming or 'nothing'}; flags set: {failing_flags(args.px4)}"
        )
        t_arm = physics.now()[0]
        results, flown = flight(physics, gcs)
        report(results, physics, gcs, t_arm, boot)
        later = [t for s, t in gcs.texts if s <= mavlink.MAV_SEVERITY_WARNING][len(warnings) :]
        print(f"in flight, STATUSTEXT at warning or worse: {later or 'none'}")
        ok = ok and flown and ready and not at_arming
    finally:
        if px4 is not None:
            stop_px4(px4)
        physics.bridge.stop = True
        physics.join(5.0)
        physics.bridge.close()
        keep = Path(tempfile.gettempdir()) / "px4_sitl_check_last.log"
        if (workdir / "px4.log").exists():
            shutil.copy(workdir / "px4.log", keep)
            print(f"PX4's console: {keep}")
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
