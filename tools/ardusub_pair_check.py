"""Fly the connected pair of Nielsen et al. (2018) with two real ArduSub SITLs on one physics
(docs/sitl.md, "Several vehicles, one ArduSub each") and print what they did.

    P=~/ardupilot/Tools/autotest/default_params
    .venv/bin/python tools/ardusub_pair_check.py --ardusub ~/ardupilot/build/sitl/bin/ardusub \
        --defaults $P/sub.parm [--speedup 1]

ArduPilot is not part of this project: build ArduSub SITL from ArduPilot's source yourself.
The script serves ``bluerov1_pair`` with ``uvms_sim.hil.sitl_multi`` (ports 9002 and 9012),
starts two ``ardusub`` instances (``-I 0`` and ``-I 1``, MAV_SYSID 1 and 2, the BlueROV1 frame
``FRAME_CONFIG 0`` and each vehicle's reversed motors in a parameter file of its own), talks
MAVLink to each over TCP 5760 + 10 k with a ground-station thread per vehicle
(``ardusub_sitl_check.GroundStation``), arms both in MANUAL, switches both to ALT_HOLD, dives
both together on the throttle stick, releases, and checks: both armed, both dived, the
connection held (the two vehicles' origins stay 0.70 m apart) and the pair stayed level.
Exit status 1 if a check fails.

``--forward`` then flies Nielsen et al.'s (2018, section 4.2.2) surge trials in ALT_HOLD: both
vehicles' forward stick so that their surge motors (1 and 2) run at ``--forward-pwm`` for 8 s,
the sticks centred for 20 s to stop and level again, then the port vehicle's forward stick
alone for 8 s (``--trials`` sets which and in what order);
it prints the pair's roll, pitch, yaw and depth and each vehicle's motor PWMs (the JSON frames'
and SERVO_OUTPUT_RAW) every 0.5 s, and the same two trials flown by the simulator's emulated
ArduSub on the same description (both with the forward stick, and with motors 1 and 2 given the
PWM open-loop as in the paper). These are measurements: no check is added for them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from pymavlink import mavutil
from transforms3d.euler import quat2euler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ardusub_sitl_check import ALT_HOLD, HOME, MANUAL, GroundStation, fly, set_mode, stop_ardusub

from uvms_sim.hil.sitl_multi import SitlJsonMulti
from uvms_sim.model import System, load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator


class PairPhysics(threading.Thread):
    """The multi-instance backend served in a thread; each instance's answered position and
    attitude recorded every ``every`` steps."""

    def __init__(self, description: str, every: int = 12) -> None:
        super().__init__(daemon=True)
        self.backend = SitlJsonMulti(Simulator.from_system(load(resolve(description))))
        self.history: list[tuple[float, np.ndarray, np.ndarray]] = []  # (t, q of the tree root, v)
        self.positions: list[tuple[float, list[list[float]], list[list[float]]]] = []
        self.every = every
        self.stop = threading.Event()

    def run(self) -> None:
        b = self.backend
        k = 0
        while not self.stop.is_set():
            if not b.serve_once(0.05):
                continue
            st = b.sim.state
            self.history.append((st.t, st.q[:7].copy(), st.v[:6].copy()))
            k += 1
            if k % self.every == 0 and all(i.last_reply for i in b.instances):
                answers = [json.loads(i.last_reply or b"{}") for i in b.instances]
                positions = [a["position"] for a in answers]
                self.positions.append((st.t, positions, [a["quaternion"] for a in answers]))

    def now(self) -> tuple[float, np.ndarray, np.ndarray]:
        return self.history[-1]


def parameter_file(directory: str, backend: SitlJsonMulti, k: int) -> str:
    """FRAME_CONFIG 0 (BlueROV1) and MOT_n_DIRECTION of instance k's reversed motors."""
    inst = backend.instances[k]
    lines = ["FRAME_CONFIG 0"]
    for motor, sign in sorted(backend.bank.motor_directions(inst.thrusters).items()):
        lines.append(f"MOT_{motor}_DIRECTION {int(sign)}")
    path = os.path.join(directory, f"pair{k}.parm")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


JS_GAIN = 0.5  # JS_GAIN_DEFAULT (sub.parm leaves it at ArduSub's default)
SAMPLE = 0.5  # s between the printed samples of the forward trials
TRIAL = 8.0  # s of each forward trial


def forward_stick(pwm: float) -> int:
    """MANUAL_CONTROL x that puts RC5 (forward) at ``pwm``: ArduSub's joystick mapping is
    1500 + 0.4 x JS_GAIN x x (``Sub::transform_manual_control_to_rc_override``), and the
    BLUEROV1 mixer gives motors 1 and 2 forward factor 1 and 1500 + 400 x norm_input(RC5) us
    (``AP_Motors6DOF::calc_thrust_to_pwm``) when the yaw controller adds nothing."""
    return round((pwm - 1500.0) / (0.4 * JS_GAIN))


def attitude(q: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) in degrees of a free joint's quaternion (NED <- body, ZYX)."""
    return tuple(float(a) for a in np.degrees(quat2euler(q[3:7], axes="sxyz")))  # type: ignore[return-value]


def summary(label: str, rows: list[tuple]) -> tuple[float, float, float]:
    """Print a trial's (t, depth, roll, pitch, yaw, motor PWMs...) rows and return its peak
    largest pitch (signed), depth change and yaw change (deg, m, deg)."""
    print(f"{label}")
    print("     t   depth    roll   pitch     yaw   motors 1-6 port | starboard")
    t0, d0, _, _, y0 = rows[0][:5]
    for t, d, r, p, y, *pwm in rows:
        print(f"  {t - t0:4.1f} {d:7.3f} {r:7.2f} {p:7.2f} {y:7.2f}   {' | '.join(str(x) for x in pwm)}")
    pitch = np.array([r[3] for r in rows])
    peak = float(pitch[np.argmax(np.abs(pitch))])
    dyaw = float(np.unwrap([r[4] for r in rows], period=360.0)[-1] - y0)  # a turn may pass 180
    print(f"  peak pitch {peak:.2f} deg, depth change {rows[-1][1] - d0:+.3f} m, yaw change {dyaw:+.2f} deg")
    return peak, rows[-1][1] - d0, dyaw


def emulated_forward(system: System, driven: tuple[str, ...], pwm: float, open_loop: bool,
                     dt: float = 0.02) -> list[tuple]:  # fmt: skip
    """The forward trial flown by the emulated ArduSub (bluerov1 frame, ALT_HOLD) on ``system``
    from rest: the ``driven`` vehicles' forward stick (RC5) at ``pwm``, or with ``open_loop``
    their motors 1 and 2 set to ``pwm`` whatever the autopilot outputs."""
    from uvms_sim.actuators.ardusub import ArduSubEmulator, VehicleState
    from uvms_sim.dynamics import forward_kinematics

    sim = Simulator.from_system(system)
    bank = sim.thrusters
    assert bank is not None, "the description has no thrusters"
    pilots = {v: ArduSubEmulator("bluerov1") for v in ("port", "starboard")}
    for vehicle, ap in pilots.items():
        ap.arm()
        ap.set_mode("ALT_HOLD")
        if vehicle in driven and not open_loop:
            ap.set_rc(np.array([65535] * 4 + [pwm]))
    rows = []
    every = round(SAMPLE / dt)
    for k in range(round(TRIAL / dt) + 1):
        forward_kinematics(sim.model, sim.data, sim.state.q, sim.state.v)
        out_pwm = np.full(len(bank), 1500.0)
        motors: dict[str, list[int]] = {}
        for vehicle, ap in pilots.items():
            i = sim.model.body_index(f"{vehicle}/base_link")
            out = ap.update(
                VehicleState.from_body(sim.data.R_world[i], sim.data.p_world[i], sim.data.v[i]), dt
            )
            if open_loop:  # as the paper's trials: no autopilot on the surge motors
                out[1] = out[2] = pwm if vehicle in driven else 1500.0
            motors[vehicle] = [round(out[m]) for m in range(1, 7)]
            for j, name in enumerate(bank.names):
                if name.startswith(vehicle + "/"):
                    out_pwm[j] = out[int(bank.motors[j] or 0)]
        if k % every == 0:
            q = sim.state.q
            rows.append((sim.state.t, float(q[2]), *attitude(q), motors["port"], motors["starboard"]))
        if k == round(TRIAL / dt):
            break
        bank.set_pwm(out_pwm)
        sim.step(dt)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ardusub", required=True, help="path of the ardusub SITL binary")
    ap.add_argument("--defaults", required=True, help="ArduSub's default_params files, comma separated")
    ap.add_argument("--description", default="bluerov1_pair")
    ap.add_argument("--speedup", type=float, default=1.0, help="SITL --speedup")
    ap.add_argument("--forward", action="store_true", help="then fly the surge trials (see above)")
    ap.add_argument("--forward-pwm", type=float, default=1800.0, help="surge motors' PWM (us)")
    ap.add_argument("--trials", default="both,port", help="forward trials in order: both, port")
    args = ap.parse_args()
    if not set(args.trials.split(",")) <= {"both", "port"}:
        ap.error(f"--trials: expected a comma-separated list of both, port; got {args.trials!r}")

    physics = PairPhysics(args.description)
    physics.start()
    backend = physics.backend
    n = len(backend.instances)
    sitls, links, stations = [], [], []
    wall0 = time.monotonic()
    results: dict[tuple[str, str], tuple[float, float, float]] = {}
    try:
        for k in range(n):
            workdir = tempfile.mkdtemp(prefix=f"ardusub_pair{k}_")
            defaults = f"{args.defaults},{parameter_file(workdir, backend, k)}"
            cmd = [args.ardusub, "-I", str(k), "--model", "JSON:127.0.0.1", "--defaults", defaults,
                   "--home", HOME, "-w", "--speedup", str(args.speedup), "--sysid", str(k + 1)]  # fmt: skip
            quiet = subprocess.DEVNULL
            sitls.append(subprocess.Popen(cmd, cwd=workdir, stdout=quiet, stderr=quiet))
        for k in range(n):
            mav = mavutil.mavlink_connection(f"tcp:127.0.0.1:{5760 + 10 * k}", source_system=255)
            mav.wait_heartbeat(timeout=120)
            gcs = GroundStation(mav, physics)  # type: ignore[arg-type]
            gcs.start()
            links.append(mav)
            stations.append(gcs)
        while not physics.history:
            time.sleep(0.1)
        first, *others = list(zip(links, stations, strict=True))

        def all_fly(seconds: float, **sticks) -> None:
            for _, gcs in others:
                gcs.sticks = {"x": 0, "y": 0, "z": 500, "r": 0, **sticks}
            fly(first[0], physics, seconds, first[1], **sticks)  # type: ignore[arg-type]
            for mav, _ in others:
                while mav.recv_match(blocking=False) is not None:
                    pass

        all_fly(30.0)  # the EKFs settle
        for mav, gcs in zip(links, stations, strict=True):
            set_mode(mav, physics, MANUAL, gcs)  # type: ignore[arg-type]
        for _attempt in range(40):
            for mav, gcs in zip(links, stations, strict=True):
                if not mav.motors_armed():
                    gcs.send(lambda m: m.arducopter_arm())
            all_fly(1.0)
            for mav in links:
                mav.recv_match(type="HEARTBEAT", blocking=True, timeout=1.0)
            if all(mav.motors_armed() for mav in links):
                break
        armed = [bool(mav.motors_armed()) for mav in links]
        for mav, gcs in zip(links, stations, strict=True):
            set_mode(mav, physics, ALT_HOLD, gcs)  # type: ignore[arg-type]
        depth0 = physics.now()[1][2]
        t_dive = physics.now()[0]
        all_fly(5.0, z=150)
        all_fly(12.0)
        depth1 = physics.now()[1][2]
        rows = [(t, p, q) for t, p, q in physics.positions if t >= t_dive]
        spans = [float(np.linalg.norm(np.subtract(p[1], p[0]))) for _, p, _ in rows]
        depths = np.array([[p[0][2], p[1][2]] for _, p, _ in rows])
        roll = np.degrees([quat2euler(q[0], "rzyx")[2] for _, _, q in rows])
        wall = time.monotonic() - wall0
        apart = float(np.max(np.abs(np.diff(depths, axis=1))))
        # each vehicle's depth change since the switch to ALT_HOLD: the two ArduSubs hold the
        # depths they had then, so a pair that came to ALT_HOLD rolled stays rolled (each
        # vehicle's depth loop holds its own origin's depth against both attitude loops)
        changes = depths - depths[0]
        together = float(np.max(np.abs(np.diff(changes, axis=1))))
        checks = {
            "both ArduSubs armed": all(armed),
            "the pair dived in ALT_HOLD (> 0.3 m)": depth1 > depth0 + 0.3,
            "both vehicles dived together (depth changes within 0.05 m)": together < 0.05,
            "the connection held (0.70 m +- 1 mm)": float(np.max(np.abs(np.array(spans) - 0.70))) < 1e-3,
            "the pair stayed level (roll within 10 deg)": float(np.max(np.abs(roll))) < 10.0,
        }
        c = backend.counters
        t_end = physics.now()[0]
        print(f"{args.description}, {n} ArduSubs; physics time {t_end:.1f} s in {wall:.1f} s wall "
              f"({t_end / wall:.2f}x, SITL --speedup {args.speedup}); steps {backend.times.frames}, "
              f"frames {c.frames}, resends {c.resends}, lost {c.lost}, restarts {c.restarts}")  # fmt: skip
        print(f"depth {depth0:.3f} -> {depth1:.3f} m; vehicles' depth difference at most "
              f"{apart:.4f} m, their depth changes {together:.4f} m apart; "
              f"span {min(spans):.4f}-{max(spans):.4f} m; "
              f"roll at most {np.max(np.abs(roll)):.2f} deg")  # fmt: skip
        for name, ok in checks.items():
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")
        if args.forward:
            results = forward_trials(args, physics, links, stations)
        status = 0 if all(checks.values()) else 1
    finally:
        for gcs in stations:
            gcs.stop()
        for proc in sitls:
            stop_ardusub(proc)
        physics.stop.set()
        physics.join(2.0)
        backend.close()
    if args.forward:  # with the SITLs stopped
        emulated_trials(args, results)
    return status


def forward_trials(
    args: argparse.Namespace, physics: PairPhysics, links: list, stations: list
) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Both vehicles forward, stop, the port vehicle forward (ALT_HOLD)."""
    backend = physics.backend
    for gcs in stations:  # SERVO_OUTPUT_RAW at 10 Hz
        interval = mavutil.mavlink.MAVLINK_MSG_ID_SERVO_OUTPUT_RAW
        gcs.send(lambda m, i=interval: m.mav.command_long_send(
            m.target_system, m.target_component, mavutil.mavlink.MAV_CMD_SET_MESSAGE_INTERVAL,
            0, i, 100000, 0, 0, 0, 0, 0))  # fmt: skip
    x = forward_stick(args.forward_pwm)

    def drive(sticks: list[int], seconds: float) -> list[tuple]:
        for gcs, fx in zip(stations, sticks, strict=True):
            gcs.sticks = {"x": fx, "y": 0, "z": 500, "r": 0}
        rows = []
        t_next = physics.now()[0]
        t_end = t_next + seconds
        while True:
            for mav in links:
                while mav.recv_match(blocking=False) is not None:
                    pass
            t, q, _ = physics.now()
            if t >= t_next:
                frames = [list(inst.last_pwm or ())[:6] for inst in backend.instances]
                raw = [mav.messages.get("SERVO_OUTPUT_RAW") for mav in links]
                servo = [[getattr(r, f"servo{m}_raw") for m in range(1, 7)] if r else [] for r in raw]
                rows.append((t, float(q[2]), *attitude(q), *frames, *servo))
                t_next += SAMPLE
                if t >= t_end:
                    return rows
            time.sleep(0.005)

    n = len(stations)
    results: dict[tuple[str, str], tuple[float, float, float]] = {}
    print(f"forward stick x={x} (motors 1, 2 -> {args.forward_pwm:.0f} us); PWM columns: the JSON "
          "frames' port | starboard, then SERVO_OUTPUT_RAW port | starboard")  # fmt: skip
    for case in args.trials.split(","):
        drive([0] * n, 10.0 if not results else 20.0)  # settle; stop and level again
        sticks = {"both": [x] * n, "port": [x] + [0] * (n - 1)}[case]
        results["real", case] = summary(f"real ArduSub, {case} forward", drive(sticks, TRIAL))
    drive([0] * n, 1.0)
    return results


def emulated_trials(args: argparse.Namespace, results: dict) -> None:
    """The same trials flown by the emulated ArduSub, and the table of all."""
    system = load(resolve(args.description))
    for open_loop in (False, True):
        how = "motors 1, 2 open-loop" if open_loop else "forward stick RC5"
        for case in args.trials.split(","):
            driven = {"both": ("port", "starboard"), "port": ("port",)}[case]
            results["emulated " + how, case] = summary(
                f"emulated ArduSub, {how} {args.forward_pwm:.0f} us, {' and '.join(driven)}, dt 0.02 s",
                emulated_forward(system, driven, args.forward_pwm, open_loop),
            )
    print("peak pitch (deg) / depth change (m) / yaw change (deg) over the 8 s")
    for (label, case), (peak, dd, dy) in results.items():
        print(f"  {label:38s} {case:5s} {peak:8.2f} {dd:+8.3f} {dy:+8.2f}")


if __name__ == "__main__":
    sys.exit(main())
