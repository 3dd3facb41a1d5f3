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
from ardusub_sitl_check import ALT_HOLD, HOME, MANUAL, GroundStation, fly, set_mode

from uvms_sim.hil.sitl_multi import SitlJsonMulti
from uvms_sim.model import load
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ardusub", required=True, help="path of the ardusub SITL binary")
    ap.add_argument("--defaults", required=True, help="ArduSub's default_params files, comma separated")
    ap.add_argument("--description", default="bluerov1_pair")
    ap.add_argument("--speedup", type=float, default=1.0, help="SITL --speedup")
    args = ap.parse_args()

    physics = PairPhysics(args.description)
    physics.start()
    backend = physics.backend
    n = len(backend.instances)
    sitls, links, stations = [], [], []
    wall0 = time.monotonic()
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
        checks = {
            "both ArduSubs armed": all(armed),
            "the pair dived in ALT_HOLD (> 0.3 m)": depth1 > depth0 + 0.3,
            "both vehicles dived together (depths within 0.05 m)": apart < 0.05,
            "the connection held (0.70 m +- 1 mm)": float(np.max(np.abs(np.array(spans) - 0.70))) < 1e-3,
            "the pair stayed level (roll within 10 deg)": float(np.max(np.abs(roll))) < 10.0,
        }
        c = backend.counters
        t_end = physics.now()[0]
        print(f"{args.description}, {n} ArduSubs; physics time {t_end:.1f} s in {wall:.1f} s wall "
              f"({t_end / wall:.2f}x, SITL --speedup {args.speedup}); steps {backend.times.frames}, "
              f"frames {c.frames}, resends {c.resends}, lost {c.lost}, restarts {c.restarts}")  # fmt: skip
        print(f"depth {depth0:.3f} -> {depth1:.3f} m; vehicles' depth difference at most "
              f"{apart:.4f} m; span {min(spans):.4f}-{max(spans):.4f} m; "
              f"roll at most {np.max(np.abs(roll)):.2f} deg")  # fmt: skip
        for name, ok in checks.items():
            print(f"  [{'ok' if ok else 'FAILED'}] {name}")
        return 0 if all(checks.values()) else 1
    finally:
        for gcs in stations:
            gcs.stop()
        for proc in sitls:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        physics.stop.set()
        physics.join(2.0)
        backend.close()


if __name__ == "__main__":
    sys.exit(main())
