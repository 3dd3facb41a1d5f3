"""Fly a real ArduSub SITL on uvms_sim's physics and print what it did (docs/sitl.md).

    P=~/ardupilot/Tools/autotest/default_params
    .venv/bin/python tools/ardusub_sitl_check.py --ardusub ~/ardupilot/build/sitl/bin/ardusub \
        --defaults $P/sub.parm,$P/sub-6dof.parm [--description bluerov2_heavy] [--althold sitl|firmware]

ArduPilot is not part of this project: build ArduSub SITL from ArduPilot's source yourself
(``./waf configure --board sitl && ./waf sub``). This script starts the SITL JSON backend in
this process, then the given ``ardusub`` binary as a child process in a temporary directory
(``--model JSON:127.0.0.1``, a sea-level home, a wiped parameter store), talks MAVLink to it
over TCP 5760 with pymavlink as a ground station would, and flies: MANUAL arm, a dive with
MANUAL_CONTROL, ALT_HOLD for 20 s with the sticks centred, an ALT_HOLD dive on the throttle
stick released (compared with the same dive flown by the simulator's emulated ArduSub),
forward, lateral and yaw sticks in ALT_HOLD, disarm. It compares ArduSub's attitude estimate
(ATTITUDE) with the physics and prints one table; the exit status is 1 if a check fails.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from pymavlink import mavutil
from transforms3d.euler import quat2euler

from uvms_sim.hil.sitl_json import DEFAULT_PORT, SitlJsonBackend
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

MANUAL, ALT_HOLD = 19, 2  # ArduSub custom modes
HOME = "33.810313,-118.393867,0,185"  # ArduSub's autotest start: sea level (see docs/sitl.md)


class Physics(threading.Thread):
    """The backend served in a thread, with the vehicle's state recorded after every frame
    (on ``port``: 9002 + 10 k for SITL instance ``-I k``; ``sim``: a simulator made ready
    beforehand, instead of one of ``description``)."""

    def __init__(self, description: str, port: int = DEFAULT_PORT, sim: Simulator | None = None) -> None:
        super().__init__(daemon=True)
        sim = sim if sim is not None else Simulator.from_system(load(resolve(description)))
        self.backend = SitlJsonBackend(sim, port=port)
        self.history: list[tuple[float, np.ndarray, np.ndarray]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        b = self.backend
        s = b.sim.model.q_slice(b.root)
        while not self.stop.is_set():
            if b.serve_once(0.05):
                st = b.sim.state
                self.history.append((st.t, st.q[s].copy(), st.v[b.sim.model.v_slice(b.root)].copy()))

    def now(self) -> tuple[float, np.ndarray, np.ndarray]:
        return self.history[-1]

    def close(self) -> None:
        """Stop serving: the thread ended and the backend's socket closed."""
        self.stop.set()
        self.join(2.0)
        self.backend.close()


def stop_ardusub(proc: subprocess.Popen) -> None:
    """End an ArduSub SITL process: SIGTERM, then SIGKILL after 5 s."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


class GroundStation(threading.Thread):
    """The ground station's side of the link, in its own thread: a HEARTBEAT and the current
    MANUAL_CONTROL sticks every 0.05 s of simulated time (20 Hz, as QGroundControl sends its
    joystick), whatever the main thread is doing meanwhile (waiting for a mode, computing the
    emulated dive). A gap in either lets ArduSub's failsafes act (FS_GCS_ENABLE on the
    heartbeat; FS_PILOT_INPUT after FS_PILOT_TIMEOUT without MANUAL_CONTROL: disarm), and at
    ``--speedup 10`` one second of computing here is ten seconds for ArduSub. Everything sent
    on the link goes through ``send`` (one writer at a time)."""

    def __init__(self, mav, physics: Physics) -> None:
        super().__init__(daemon=True)
        self.mav, self.physics = mav, physics
        self.sticks = {"x": 0, "y": 0, "z": 500, "r": 0}
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.sent = 0

    def send(self, action) -> None:
        with self.lock:
            action(self.mav)

    def _beat(self, mav) -> None:
        mav.mav.heartbeat_send(mavutil.mavlink.MAV_TYPE_GCS, mavutil.mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        s = self.sticks
        mav.mav.manual_control_send(mav.target_system, s["x"], s["y"], s["z"], s["r"], 0)
        self.sent += 1

    def run(self) -> None:
        next_t = -1.0
        while not self.halt.is_set():
            t = self.physics.now()[0] if self.physics.history else 0.0
            if t >= next_t or not self.physics.history:
                self.send(self._beat)
                next_t = t + 0.05
            time.sleep(0.002 if self.physics.history else 0.05)

    def stop(self) -> None:
        self.halt.set()
        self.join(2.0)


def fly(mav, physics: Physics, seconds: float, gcs: GroundStation | None = None, **sticks) -> list:
    """Hold the sticks for ``seconds`` of simulated time (the ground station thread sends
    them); returns the ArduSub messages received meanwhile."""
    if gcs is not None:
        gcs.sticks = {"x": 0, "y": 0, "z": 500, "r": 0, **sticks}
    t_end = physics.now()[0] + seconds
    got = []
    while physics.now()[0] < t_end:
        msg = mav.recv_match(blocking=True, timeout=0.02)
        if msg is not None:
            got.append((physics.now()[0], msg))
    return got


def set_mode(mav, physics: Physics, mode: int, gcs: GroundStation) -> None:
    for _ in range(20):
        gcs.send(lambda m: m.set_mode(mode))
        fly(mav, physics, 0.5, gcs)
        hb = mav.messages.get("HEARTBEAT")
        if hb is not None and hb.custom_mode == mode:
            return
    raise RuntimeError(f"ArduSub did not take mode {mode}")


def stop_after_release(history, t_release: float) -> tuple[float, float, float]:
    """(dive rate at release, depth held 10 s later minus the release depth, largest depth
    past the held one) from (t, q, v) samples."""
    t = np.array([h[0] for h in history])
    depth = np.array([h[1][2] for h in history])
    k = int(np.searchsorted(t, t_release))
    rate = float((depth[k] - depth[max(0, k - 50)]) / max(t[k] - t[max(0, k - 50)], 1e-9))
    after = depth[k:]
    return rate, float(after[-1] - depth[k]), float(after.max() - after[-1])


def emulated_dive(
    description: str, depth: float, seconds: float, z: int, preset: str
) -> tuple[float, float, float]:
    """The same ALT_HOLD dive flown by the simulator's own emulated ArduSub (the MANUAL_CONTROL
    z turned into the throttle channel as ArduSub does, ``mavros_shim.JS_GAIN_DEFAULT``)."""
    from uvms_sim.actuators import althold
    from uvms_sim.actuators.ardusub import ArduSubEmulator, ModeGains, VehicleState, infer_frame
    from uvms_sim.ros.mavros_shim import JS_GAIN_DEFAULT

    params = {"sitl": althold.ALT_HOLD_SITL, "firmware": althold.ALT_HOLD_FIRMWARE}[preset]

    sim = Simulator.from_system(load(resolve(description)))
    sim.state.q[2] = depth
    bank = sim.thrusters
    frame = infer_frame(list(bank.motors)) or "vectored"
    ap = ArduSubEmulator(frame, directions=bank.motor_directions(), gains=ModeGains(althold=params))
    ap.set_mode("ALT_HOLD")
    ap.arm()
    thr = 0.8 * JS_GAIN_DEFAULT
    dive = [1500, 1500, z * thr + 1500.0 - 500.0 * thr, 1500, 1500, 1500]
    dt, history = 0.0025, []
    for k in range(round((seconds + 12.0) / dt)):
        ap.set_rc(dive if k * dt < seconds else [1500] * 6)
        s = VehicleState.from_free_joint(sim.state.q[:7], sim.state.v[:6])
        sim.thrusters.set_motor_pwm(ap.update(s, dt))
        sim.step(dt)
        history.append((sim.state.t, sim.state.q[:7].copy(), None))
    return stop_after_release(history, seconds)


def keep_logs(workdir: str, target: str, history) -> None:
    """Copy ArduSub's DataFlash logs out of its working directory and write the ground truth."""
    for path in glob.glob(os.path.join(workdir, "logs", "*.BIN")):
        shutil.copy(path, target)
    rows = [np.r_[t, q, v] for t, q, v in history]
    header = "t,n,e,d,qw,qx,qy,qz,u,v,w,p,q,r"
    np.savetxt(os.path.join(target, "truth.csv"), np.array(rows), delimiter=",", header=header, comments="")
    print(f"kept {', '.join(sorted(os.listdir(target)))} in {target}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ardusub", required=True, help="path of the ardusub SITL binary")
    ap.add_argument(
        "--defaults",
        required=True,
        help="ArduSub's default_params files, comma separated (sub.parm,sub-6dof.parm)",
    )
    ap.add_argument("--description", default="bluerov2_heavy")
    ap.add_argument("--speedup", type=float, default=1.0, help="SITL --speedup")
    ap.add_argument(
        "--althold",
        choices=("sitl", "firmware"),
        default="sitl",
        help="the emulated depth hold to compare with: sub.parm's values (--defaults with sub.parm) "
        "or the firmware's own (--defaults without it)",
    )
    ap.add_argument(
        "--keep-logs",
        help="directory to keep ArduSub's DataFlash log (.BIN), this ground station's telemetry log "
        "(flight.tlog) and the physics' ground truth (truth.csv: t, NED position, FRD->NED quaternion, "
        "FRD velocity) in, for trying `uvms-sim replay` on a real ArduSub's logs",
    )
    args = ap.parse_args()

    physics = Physics(args.description)
    physics.start()
    workdir = tempfile.mkdtemp(prefix="ardusub_sitl_")
    # as on a real vehicle: no RC receiver (SITL simulates one, whose pulses would count as pilot
    # input and hide a gap in MANUAL_CONTROL from the pilot-input failsafe), and an eight-thruster
    # vehicle's motor 8 on SERVO8 (sub.parm gives SERVO8 to the camera mount)
    extra = os.path.join(workdir, "vehicle.parm")
    with open(extra, "w") as f:
        f.write("SIM_RC_FAIL 1\n")
        if 8 in physics.backend.bank.motors:
            f.write("SERVO8_FUNCTION 40\n")
    defaults = f"{args.defaults},{extra}"
    cmd = [args.ardusub, "--model", "JSON:127.0.0.1", "--defaults", defaults, "--home", HOME,
           "-w", "--speedup", str(args.speedup)]  # fmt: skip
    sitl = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall0 = time.monotonic()
    gcs: GroundStation | None = None
    try:
        mav = mavutil.mavlink_connection("tcp:127.0.0.1:5760", source_system=255, autoreconnect=True)
        mav.wait_heartbeat(timeout=60)
        gcs = GroundStation(mav, physics)
        gcs.start()
        if args.keep_logs:
            os.makedirs(args.keep_logs, exist_ok=True)
            mav.setup_logfile(os.path.join(args.keep_logs, "flight.tlog"))
            gcs.send(lambda m: m.param_set_send("LOG_DISARMED", 1))  # the whole flight in the DataFlash log
        for msg_id in (30, 33, 74, 29):  # ATTITUDE, GLOBAL_POSITION_INT, VFR_HUD, SCALED_PRESSURE
            gcs.send(lambda m, i=msg_id: m.mav.command_long_send(
                m.target_system, m.target_component, mavutil.mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0, i,
                20000, 0, 0, 0, 0, 0))  # fmt: skip
        while not physics.history:
            time.sleep(0.1)
        boot = fly(mav, physics, 30.0, gcs)  # the EKF settles
        depth_at_arm = physics.now()[1][2]
        set_mode(mav, physics, MANUAL, gcs)
        armed_at = None
        for _attempt in range(40):
            gcs.send(lambda m: m.arducopter_arm())
            fly(mav, physics, 1.0, gcs)
            if mav.motors_armed():
                armed_at = physics.now()[0]
                break
        if armed_at is None:
            raise RuntimeError("ArduSub refused to arm: " + " / ".join(
                m.text for _, m in boot if m.get_type() == "STATUSTEXT"))  # fmt: skip
        log = []
        log += fly(mav, physics, 6.0, gcs, z=150)  # throttle down: dive
        log += fly(mav, physics, 3.0, gcs)  # sticks centred: the dive slows down
        depth_dive = physics.now()[1][2]
        set_mode(mav, physics, ALT_HOLD, gcs)
        depth_target = physics.now()[1][2]
        log += fly(mav, physics, 10.0, gcs)  # ArduSub's depth controller settles
        t_hold = physics.now()[0]
        log += fly(mav, physics, 20.0, gcs)
        hold = np.array([(t, q[2]) for t, q, _ in physics.history if t_hold <= t <= t_hold + 20.0])
        hold_error = float(np.max(np.abs(hold[:, 1] - hold[0, 1])))
        # a dive on the throttle stick in ALT_HOLD, then the stick centred: where ArduSub stops
        log += fly(mav, physics, 5.0, gcs, z=150)
        t_release = physics.now()[0]
        log += fly(mav, physics, 12.0, gcs)
        real_stop = stop_after_release(physics.history, t_release)
        sticks = {}
        for name, stick, axis in (
            ("forward", {"x": 500}, 0),
            ("lateral", {"y": 500}, 1),
            ("yaw", {"r": 500}, 5),
        ):
            log += fly(mav, physics, 3.0, gcs, **stick)
            t_now = physics.now()[0]
            vals = [v[axis] for t, _, v in physics.history if t_now - 1.0 <= t <= t_now]
            sticks[name] = float(np.mean(vals))
            log += fly(mav, physics, 3.0, gcs)
        gcs.send(lambda m: m.arducopter_disarm())
        fly(mav, physics, 1.0, gcs)
        # computed once ArduSub is disarmed: nothing of the flight waits for it (the ground
        # station thread keeps the heartbeat and the sticks going meanwhile all the same)
        emulated_stop = emulated_dive(args.description, hold[-1, 1], 5.0, 150, args.althold)
        # ArduSub's attitude estimate against the physics, on SITL's clock (time_boot_ms)
        times = np.array([h[0] for h in physics.history])
        eul = np.array([quat2euler(h[1][3:7], "rzyx")[::-1] for h in physics.history])  # roll, pitch, yaw
        att = [(t, m) for t, m in log if m.get_type() == "ATTITUDE"]
        offset = np.median([m.time_boot_ms / 1000.0 - t for t, m in att])
        err = []
        for _, m in att:
            k = min(np.searchsorted(times, m.time_boot_ms / 1000.0 - offset), len(times) - 1)
            d = np.array([m.roll, m.pitch, m.yaw]) - eul[k]
            err.append((d + math.pi) % (2 * math.pi) - math.pi)
        rms = np.degrees(np.sqrt(np.mean(np.square(err), axis=0)))
        c = physics.backend.counters
        wall = time.monotonic() - wall0
        split = physics.backend.times.split()
        checks = {
            "armed in MANUAL": True,
            "dived (m below the surface)": depth_dive > depth_at_arm + 0.3,
            "ALT_HOLD depth within +-0.05 m for 20 s": hold_error <= 0.05,
            "forward stick: u > 0.1 m/s": sticks["forward"] > 0.1,
            "lateral stick: v > 0.1 m/s": sticks["lateral"] > 0.1,
            "yaw stick: r > 0.1 rad/s": sticks["yaw"] > 0.1,
            "attitude RMS < 2 deg (roll, pitch, yaw)": bool(np.all(rms < 2.0)),
            "ALT_HOLD stick dive: the emulation stops within 0.05 m of ArduSub (past its release depth)": abs(
                emulated_stop[1] - real_stop[1]
            )
            <= 0.05,
        }
        print(f"description {args.description}; physics time {physics.now()[0]:.1f} s in {wall:.1f} s wall "
              f"({physics.now()[0] / wall:.2f}x, SITL --speedup {args.speedup}); frames {c.frames}, "
              f"resends {c.resends}, lost {c.lost}, restarts {c.restarts}, "
              f"physics errors {c.physics_errors}, "
              f"ignored {c.ignored}, dropped {c.dropped}")  # fmt: skip
        print("backend per frame (us): " + ", ".join(f"{k} {v:.0f}" for k, v in split.items()))
        print(
            f"depth at arming {depth_at_arm:.3f} m, after the dive {depth_dive:.3f} m, "
            f"at ALT_HOLD's start {depth_target:.3f} m"
        )
        print(f"ALT_HOLD 20 s: depth {hold[0, 1]:.3f} -> {hold[-1, 1]:.3f} m, largest departure "
              f"{hold_error:.3f} m, span {np.ptp(hold[:, 1]):.3f} m, "
              f"std {hold[:, 1].std():.4f} m")  # fmt: skip
        for who, (rate, stop, overshoot) in (("ArduSub", real_stop), ("emulated ArduSub", emulated_stop)):
            print(f"ALT_HOLD dive at MANUAL_CONTROL z=150, released at {rate:.3f} m/s ({who}): "
                  f"stops {stop:.3f} m past the release depth, at most {overshoot:.3f} m past where it "
                  "then holds")  # fmt: skip
        print(f"sticks (last second of 3 s): u {sticks['forward']:.3f} m/s, v {sticks['lateral']:.3f} m/s, "
              f"r {sticks['yaw']:.3f} rad/s")  # fmt: skip
        print(f"ATTITUDE vs physics over {len(att)} messages: RMS roll {rms[0]:.3f}, pitch {rms[1]:.3f}, "
              f"yaw {rms[2]:.3f} deg")  # fmt: skip
        for name, ok in checks.items():
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")
        return 0 if all(checks.values()) else 1
    finally:
        if gcs is not None:
            gcs.stop()
        sitl.terminate()
        try:
            out, _ = sitl.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            sitl.kill()
            out = ""
        physics.close()
        if args.keep_logs:
            keep_logs(workdir, args.keep_logs, physics.history)
        tail = [line for line in (out or "").splitlines() if "JSON" in line or "Failed" in line][-5:]
        if tail:
            print("ArduSub SITL said: " + " | ".join(tail))


if __name__ == "__main__":
    sys.exit(main())
