"""Record a real ArduSub SITL flying a set of manoeuvres on uvms_sim's physics (docs/ardusub_traces.md).

    P=~/ardupilot/Tools/autotest/default_params
    .venv/bin/python tools/ardusub_sitl_traces.py --ardusub ~/ardupilot/build/sitl/bin/ardusub \
        --defaults $P/sub.parm,$P/sub-6dof.parm --out test/data/ardusub_sitl_traces.json.gz

ArduPilot is not part of this project: build ArduSub SITL from ArduPilot's source yourself.
This starts the SITL JSON backend in this process and the given ``ardusub`` binary as a child
(``--model JSON:127.0.0.1``, a sea-level home, a wiped parameter store), and flies it as a
ground station does, over MAVLink on TCP 5760 with pymavlink: a HEARTBEAT and the RC channels
(RC_CHANNELS_OVERRIDE, as MAVROS's ``rc/override`` sends them) every 0.05 s of simulated time
from a thread of its own, and at once whenever the sticks change. The manoeuvres
(``MANOEUVRES``): arming with the throttle up (sub.parm's RC_OPTIONS 0, then the firmware's
default RC_OPTIONS 32), the MANUAL sticks one axis at a time, STABILIZE attitude steps and
their release, ALT_HOLD dives and climbs at several throttle sticks from rest and their
release, and the pilot-input failsafe (the RC channels stopped, the heartbeat kept; SITL's
simulated RC receiver is switched off with SIM_RC_FAIL 1, as a BlueROV2 has none). Between
manoeuvres ArduSub brings the vehicle back to ``--depth`` in ALT_HOLD and holds it there.

The output (gzip JSON) holds, per manoeuvre: its mode, the RC channels in effect from each
time on (as this ground station sent them, on the physics clock), the physics state at its
start (free-joint q and v) and the trace at ``--rate`` Hz (t, NED position, roll/pitch/yaw,
body velocity, the eight servo outputs, armed), plus the events ArduSub reported (arming
results, STATUSTEXT). ``test/test_ardusub_traces.py`` flies the same RC channels with the
emulated ArduSub on the same physics and holds it to these traces.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
from ardusub_sitl_check import stop_ardusub
from pymavlink import mavutil
from transforms3d.euler import quat2euler

from uvms_sim.hil.sitl_json import SitlJsonBackend
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

HOME = "33.810313,-118.393867,0,185"  # ArduSub's autotest start: sea level (docs/sitl.md)

MODES = {"STABILIZE": 0, "ALT_HOLD": 2, "MANUAL": 19}  # ArduSub's custom modes
NEUTRAL = (1500, 1500, 1500, 1500, 1500, 1500, 1500, 1500)
PITCH, ROLL, THROTTLE, YAW, FORWARD, LATERAL = range(6)


def sticks(**channels: int) -> tuple[int, ...]:
    """The eight RC channels: neutral but for the named ones (pitch, roll, throttle, yaw,
    forward, lateral)."""
    names = ("pitch", "roll", "throttle", "yaw", "forward", "lateral")
    ch = list(NEUTRAL)
    for name, value in channels.items():
        ch[names.index(name)] = int(value)
    return tuple(ch)


# name, mode, [(seconds, channels)]: each flown from rest at --depth, held there first
MANOEUVRES: list[tuple[str, str, list[tuple[float, tuple[int, ...]]]]] = [
    ("manual_forward", "MANUAL", [(2.0, NEUTRAL), (3.0, sticks(forward=1700)), (5.0, NEUTRAL)]),
    ("manual_lateral", "MANUAL", [(2.0, NEUTRAL), (3.0, sticks(lateral=1700)), (5.0, NEUTRAL)]),
    ("manual_yaw", "MANUAL", [(2.0, NEUTRAL), (2.0, sticks(yaw=1600)), (4.0, NEUTRAL)]),
    ("manual_throttle_down", "MANUAL", [(2.0, NEUTRAL), (2.0, sticks(throttle=1400)), (4.0, NEUTRAL)]),
    ("manual_throttle_up", "MANUAL", [(2.0, NEUTRAL), (2.0, sticks(throttle=1600)), (4.0, NEUTRAL)]),
    ("manual_pitch", "MANUAL", [(2.0, NEUTRAL), (1.0, sticks(pitch=1600)), (5.0, NEUTRAL)]),
    ("manual_roll", "MANUAL", [(2.0, NEUTRAL), (1.0, sticks(roll=1600)), (5.0, NEUTRAL)]),
    ("stabilize_pitch", "STABILIZE", [(2.0, NEUTRAL), (4.0, sticks(pitch=1700)), (5.0, NEUTRAL)]),
    ("stabilize_roll", "STABILIZE", [(2.0, NEUTRAL), (4.0, sticks(roll=1700)), (5.0, NEUTRAL)]),
    ("stabilize_yaw", "STABILIZE", [(2.0, NEUTRAL), (2.0, sticks(yaw=1700)), (5.0, NEUTRAL)]),
    ("althold_1300", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(throttle=1300)), (10.0, NEUTRAL)]),
    ("althold_1400", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(throttle=1400)), (10.0, NEUTRAL)]),
    ("althold_1600", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(throttle=1600)), (10.0, NEUTRAL)]),
    ("althold_1700", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(throttle=1700)), (10.0, NEUTRAL)]),
    ("althold_1100", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(throttle=1100)), (10.0, NEUTRAL)]),
    ("althold_forward", "ALT_HOLD", [(2.0, NEUTRAL), (3.0, sticks(forward=1700)), (6.0, NEUTRAL)]),
]


class Physics(threading.Thread):
    """The backend served in a thread; after every frame the physics time, the vehicle's
    free-joint q and v and the servo outputs are kept."""

    def __init__(self, description: str) -> None:
        super().__init__(daemon=True)
        self.backend = SitlJsonBackend(Simulator.from_system(load(resolve(description))))
        self.t: list[float] = []
        self.q: list[np.ndarray] = []
        self.v: list[np.ndarray] = []
        self.pwm: list[tuple[int, ...]] = []
        self.stop = threading.Event()
        self.wall0 = time.monotonic()

    def run(self) -> None:
        b = self.backend
        qs, vs = b.sim.model.q_slice(b.root), b.sim.model.v_slice(b.root)
        while not self.stop.is_set():
            if b.serve_once(0.05):
                st = b.sim.state
                self.q.append(st.q[qs].copy())
                self.v.append(st.v[vs].copy())
                self.pwm.append(tuple(b.last_pwm[:8]) if b.last_pwm else NEUTRAL)
                self.t.append(st.t)

    def now(self) -> float:
        return self.t[-1] if self.t else 0.0

    def depth(self) -> float:
        return float(self.q[-1][2])


class Station(threading.Thread):
    """The ground station: HEARTBEAT and RC_CHANNELS_OVERRIDE every 0.05 s of simulated time,
    and the channels at once when they change; ``sending`` False stops the RC channels only
    (the pilot-input failsafe). Every change is logged on the physics clock."""

    def __init__(self, mav, physics: Physics) -> None:
        super().__init__(daemon=True)
        self.mav, self.physics = mav, physics
        self.channels = NEUTRAL
        self.sending = True
        self.lock = threading.Lock()
        self.changed = threading.Event()
        self.halt = threading.Event()
        self.log: list[tuple[float, tuple[int, ...] | None]] = []

    def send(self, action) -> None:
        with self.lock:
            action(self.mav)

    def set(self, channels: tuple[int, ...] | None) -> None:
        """New channels (None: stop sending them)."""
        with self.lock:
            if channels is None:
                self.sending = False
            else:
                self.channels, self.sending = channels, True
        self.changed.set()

    def _beat(self, mav) -> None:
        mav.mav.heartbeat_send(mavutil.mavlink.MAV_TYPE_GCS, mavutil.mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        if self.sending:
            mav.mav.rc_channels_override_send(mav.target_system, mav.target_component, *self.channels)
        last = self.log[-1][1] if self.log else ()
        now = self.channels if self.sending else None
        if now != last:
            self.log.append((self.physics.now(), now))

    def run(self) -> None:
        next_t = -1.0
        while not self.halt.is_set():
            t = self.physics.now()
            if t >= next_t or self.changed.is_set():
                self.changed.clear()
                self.send(self._beat)
                next_t = t + 0.05
            self.changed.wait(0.001)


def wait_sim(physics: Physics, seconds: float, mav=None, events=None) -> None:
    """Let ``seconds`` of simulated time pass, reading the link meanwhile."""
    t_end = physics.now() + seconds
    while physics.now() < t_end:
        drain(mav, physics, events)
        time.sleep(0.001)


def drain(mav, physics: Physics, events) -> None:
    if mav is None:
        time.sleep(0.002)
        return
    while True:
        msg = mav.recv_match(blocking=False)
        if msg is None:
            return
        kind = msg.get_type()
        if kind == "STATUSTEXT" and events is not None:
            events.append({"t": round(physics.now(), 4), "text": msg.text})
        elif kind == "COMMAND_ACK" and events is not None:
            events.append({"t": round(physics.now(), 4), "ack": [int(msg.command), int(msg.result)]})


def set_mode(mav, station: Station, physics: Physics, mode: str, events) -> None:
    for _ in range(40):
        station.send(lambda m: m.set_mode(MODES[mode]))
        wait_sim(physics, 0.25, mav, events)
        hb = mav.messages.get("HEARTBEAT")
        if hb is not None and hb.custom_mode == MODES[mode]:
            return
    raise RuntimeError(f"ArduSub did not take mode {mode}")


def arm(mav, station: Station, physics: Physics, events, value: bool = True, tries: int = 40) -> bool:
    for _ in range(tries):
        station.send(lambda m: m.arducopter_arm() if value else m.arducopter_disarm())
        wait_sim(physics, 0.5, mav, events)
        if bool(mav.motors_armed()) == value:
            return True
    return False


def go_to_depth(mav, station: Station, physics: Physics, depth: float, events, settle: float = 8.0) -> None:
    """ALT_HOLD, throttle stick towards ``depth`` until within 5 cm, then sticks centred for
    ``settle`` s."""
    set_mode(mav, station, physics, "ALT_HOLD", events)
    t_end = physics.now() + 120.0
    while abs(physics.depth() - depth) > 0.05 and physics.now() < t_end:
        station.set(sticks(throttle=1350 if physics.depth() < depth else 1650))
        wait_sim(physics, 0.05, mav, events)
    station.set(NEUTRAL)
    wait_sim(physics, settle, mav, events)


def state_rows(physics: Physics, t0: float, t1: float, rate: float) -> list[list[float]]:
    """The trace between t0 and t1 at ``rate`` Hz: t - t0, n, e, d, roll, pitch, yaw, u, v, w,
    p, q, r, eight servo outputs."""
    t = np.asarray(physics.t)
    rows = []
    for ts in np.arange(t0, t1 + 1e-9, 1.0 / rate):
        k = min(int(np.searchsorted(t, ts)), len(t) - 1)
        q, v = physics.q[k], physics.v[k]
        yaw, pitch, roll = quat2euler(q[3:7], "rzyx")
        rows.append(
            [round(float(t[k] - t0), 4)]
            + [round(float(x), 4) for x in (*q[:3], roll, pitch, yaw, *v)]
            + [int(p) for p in physics.pwm[k]]
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ardusub", required=True, help="path of the ardusub SITL binary")
    ap.add_argument("--defaults", required=True, help="ArduSub's default_params files, comma separated")
    ap.add_argument("--description", default="bluerov2_heavy")
    ap.add_argument("--speedup", type=float, default=1.0, help="SITL --speedup")
    ap.add_argument("--depth", type=float, default=5.0, help="m, where every manoeuvre starts")
    ap.add_argument("--rate", type=float, default=25.0, help="Hz of the stored traces")
    ap.add_argument("--only", default="", help="comma-separated manoeuvre names (default: all)")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        help="NAME=VALUE added after --defaults (repeatable), e.g. SERVO8_FUNCTION=40: sub.parm gives "
        "SERVO8 to the camera mount, which leaves a BlueROV2 Heavy's motor 8 without an output",
    )
    ap.add_argument("--out", required=True, help="the traces (gzip JSON)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))

    physics = Physics(args.description)
    physics.start()
    workdir = tempfile.mkdtemp(prefix="ardusub_traces_")
    # a BlueROV2 has no RC receiver: SITL's simulated one (50 Hz of default pulses on UDP) would
    # count as pilot input and keep the pilot-input failsafe from ever acting
    extra = os.path.join(workdir, "no_rc_receiver.parm")
    params = ["SIM_RC_FAIL 1"] + [p.replace("=", " ") for p in args.param]
    with open(extra, "w") as f:
        f.write("\n".join(params) + "\n")
    defaults = f"{args.defaults},{extra}"
    cmd = [args.ardusub, "--model", "JSON:127.0.0.1", "--defaults", defaults, "--home", HOME,
           "-w", "--speedup", str(args.speedup)]  # fmt: skip
    sitl = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall0 = time.monotonic()
    events: list[dict] = []
    out: dict = {
        "description": args.description,
        "defaults": [os.path.basename(p) for p in args.defaults.split(",")] + params,
        "speedup": args.speedup,
        "rate": args.rate,
        "columns": "t,n,e,d,roll,pitch,yaw,u,v,w,p,q,r,servo1..servo8".split(","),
        "manoeuvres": [],
        "events": events,
    }
    station: Station | None = None
    try:
        mav = mavutil.mavlink_connection("tcp:127.0.0.1:5760", source_system=255, autoreconnect=True)
        mav.wait_heartbeat(timeout=120)
        station = Station(mav, physics)
        station.start()
        while not physics.t:
            time.sleep(0.1)
        wait_sim(physics, 30.0, mav, events)  # the EKF settles
        set_mode(mav, station, physics, "MANUAL", events)

        # arming with the throttle up: sub.parm's RC_OPTIONS 0, then the firmware's default 32
        arming = {}
        for options in (0, 32):
            station.send(lambda m, o=options: m.param_set_send("RC_OPTIONS", o))
            wait_sim(physics, 1.0, mav, events)
            station.set(sticks(throttle=1700))
            wait_sim(physics, 0.5, mav, events)
            t_try = physics.now()
            ok = arm(mav, station, physics, events, tries=4)
            arming[str(options)] = {"t": round(t_try, 4), "armed": bool(ok), "throttle": 1700}
            station.set(NEUTRAL)
            if ok:
                wait_sim(physics, 0.5, mav, events)
                arm(mav, station, physics, events, value=False)
            wait_sim(physics, 1.0, mav, events)
        out["arming_throttle_up"] = arming
        if not arm(mav, station, physics, events):
            raise RuntimeError(f"ArduSub refused to arm: {events[-12:]}")

        for name, mode, schedule in MANOEUVRES:
            if only and name not in only:
                continue
            go_to_depth(mav, station, physics, args.depth, events)
            if mode != "ALT_HOLD":
                set_mode(mav, station, physics, mode, events)
            k0 = len(station.log)
            t0 = physics.now()
            q0, v0 = physics.q[-1].copy(), physics.v[-1].copy()
            for seconds, channels in schedule:
                station.set(channels)
                wait_sim(physics, seconds, mav, events)
            t1 = physics.now()
            rc = [[round(t - t0, 4), list(ch) if ch else None] for t, ch in station.log[k0:]]
            out["manoeuvres"].append({
                "name": name, "mode": mode, "t0": round(t0, 4), "q0": q0.round(6).tolist(),
                "v0": v0.round(6).tolist(),
                "rc": [[0.0, list(station.channels)]] if not rc else rc,
                "trace": state_rows(physics, t0, t1, args.rate),
            })  # fmt: skip
            print(f"{name}: {t1 - t0:.1f} s recorded at physics time {t1:.1f}", flush=True)

        # the pilot-input failsafe: RC channels stopped, heartbeat kept, in ALT_HOLD at rest
        go_to_depth(mav, station, physics, args.depth, events)
        k0, t0 = len(station.log), physics.now()
        q0, v0 = physics.q[-1].copy(), physics.v[-1].copy()
        station.set(None)
        t_disarm = None
        while physics.now() < t0 + 8.0:
            wait_sim(physics, 0.02, mav, events)
            if t_disarm is None and not mav.motors_armed():
                t_disarm = physics.now() - t0
        out["manoeuvres"].append({
            "name": "pilot_input_failsafe", "mode": "ALT_HOLD", "t0": round(t0, 4),
            "q0": q0.round(6).tolist(), "v0": v0.round(6).tolist(),
            "rc": [[round(t - t0, 4), list(ch) if ch else None] for t, ch in station.log[k0:]],
            "trace": state_rows(physics, t0, physics.now(), args.rate),
            "disarmed_after": None if t_disarm is None else round(t_disarm, 3),
        })  # fmt: skip
        wall = time.monotonic() - wall0
        c = physics.backend.counters
        out["run"] = {
            "physics_time": round(physics.now(), 2),
            "wall": round(wall, 1),
            "real_time_factor": round(physics.now() / wall, 3),
            "frames": c.frames,
            "resends": c.resends,
            "lost": c.lost,
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        print(json.dumps(out["run"]), json.dumps(arming), f"failsafe disarm after {t_disarm}", flush=True)
        with gzip.open(args.out, "wt") as f:
            json.dump(out, f, separators=(",", ":"))
        print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")
        return 0
    finally:
        if station is not None:
            station.halt.set()
            station.join(2.0)
        stop_ardusub(sitl)
        physics.stop.set()
        physics.join(2.0)
        physics.backend.close()


if __name__ == "__main__":
    sys.exit(main())
