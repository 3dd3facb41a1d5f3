"""Demo: the BlueROV2 Heavy with a Reach Alpha 5 picks a sample off the seabed and puts it in a
basket while ArduSub holds depth (docs/arm.md, "Pick and place").

The scene is ``bluerov2_heavy_alpha5`` with a flat seabed, a sample (an upright 20 x 60 x 80 mm
box, 0.18 kg: 0.8 N heavy in water) in front of the vehicle and a basket (a fixed box open at
the top: a floor and four walls of the scene's structures) beside it. The emulated ArduSub
(``actuators.ardusub``, the autopilot behind the node's MAVROS interface, with its attitude
gains raised for the arm: ``ARM_GAINS``) flies the vehicle in ALT_HOLD with the sticks neutral,
at its 400 Hz loop; the arm's firmware servos
(``actuators.servo``) follow rest-to-rest quintic moves between joint poses, jaws pointing down
(shoulder and elbow equal): down to the sample, closed on it, up, round over the basket, open,
and home. The sample and the basket are placed where those poses put the tool point with the
vehicle at its start (the poses are not corrected for the vehicle's drift: ALT_HOLD holds
depth and attitude, not position). It reports where the sample ends, and the depth,
roll, pitch and yaw excursions of the vehicle while the arm moves.

Run with ``python -m uvms_sim.pick_place [--rate HZ]``; it runs as fast as the machine allows
(slower than real time on a small one).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import brentq, least_squares
from transforms3d.euler import quat2euler

from .actuators.ardusub import STIFF_GAINS, ArduSubEmulator, VehicleState
from .actuators.servo import JointServos, alpha5_specs, hold_loaded
from .model.configs import resolve
from .model.description import load
from .model.kinematics import placements
from .simulator import Simulator

SEABED = 3.0  # m, NED depth of the flat seabed
HEIGHT = 0.53  # m: the vehicle's centre above the seabed
SAMPLE = (0.02, 0.06, 0.08)  # m: across the fingers, along their pivot axis, height
SAMPLE_MASS = 0.18  # kg
BASKET = (0.16, 0.16, 0.08, 0.008)  # m: outer length, width, height, wall thickness
TOOL = 0.1897  # m from the wrist link's origin along the jaws: where the fingers hold
GRIP_BELOW_TOP = 0.025  # m: the tool point below the sample's top when it is held
ARM = ("alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b")
JAWS = "alpha_5_axis_a"
OPEN, CLOSED = 0.015, 0.0  # m of push rod
# the arm's poses: base rotate, shoulder = elbow (jaws down), wrist rotate (rad); the wrist turned
# a quarter turn from the arm's start (3.1) so that the fingers close across the arm's plane
BASE, WRIST = 3.14, 3.1 - math.pi / 2
TO_BASKET = 0.9  # rad of base rotate from the sample to the basket
GRASP_HEIGHT = 0.08 - 0.025  # m above the seabed: the tool 25 mm below the sample's top
CARRY_HEIGHT = 0.16  # m: the sample's bottom clears the basket's walls
HOME = (3.14, 1.5, 1.5, 3.1)
STICK_GAINS = (2000.0, 1500.0)  # us of stick per m of offset and per m/s (the pilot's station keeping)


# ArduSub's attitude loops as a pilot tunes them for an arm: with the firmware's defaults
# (``ModeGains()``, fitted to ArduSub SITL) the arm's weight pitches the Heavy by up to 10
# degrees and the jaws miss the sample
ARM_GAINS = STIFF_GAINS


@dataclass
class Result:
    """What a run gives: where the sample ended and whether that is in the basket, and the
    vehicle's excursions (max |x - x at the first move|) while the arm moved."""

    sample: np.ndarray
    in_basket: bool
    depth_excursion: float  # m
    roll_excursion: float  # rad
    pitch_excursion: float
    yaw_excursion: float
    held: bool  # the sample was lifted off the seabed
    log: list[str] = field(default_factory=list)


def description(out: Path, sample: tuple[float, float, float] | None = None, basket=(0.3, 0.3)) -> Path:
    """The scene: bluerov2_heavy_alpha5 over a flat seabed with the basket at ``basket`` (x, y)
    and the sample standing at ``sample`` (x, y, yaw: its 60 mm side along the yaw)."""
    desc = yaml.safe_load(Path(resolve("bluerov2_heavy_alpha5")).read_text())
    src_dir = Path(resolve("bluerov2_heavy_alpha5")).parent
    vehicle = desc["vehicles"][0]
    vehicle["include"] = str(src_dir / vehicle["include"])
    vehicle["initial_pose"] = {"position": [0.0, 0.0, SEABED - HEIGHT], "rpy": [0.0, 0.0, 0.0]}
    length, width, height, wall = BASKET
    bx, by = basket
    z = SEABED - height / 2.0
    walls = [
        ("floor", [length, width, wall], [bx, by, SEABED - wall / 2.0]),
        ("wall_fore", [wall, width, height], [bx + (length - wall) / 2.0, by, z]),
        ("wall_aft", [wall, width, height], [bx - (length - wall) / 2.0, by, z]),
        ("wall_port", [length, wall, height], [bx, by - (width - wall) / 2.0, z]),
        ("wall_starboard", [length, wall, height], [bx, by + (width - wall) / 2.0, z]),
    ]
    desc["scene"] = {
        "seabed": {"type": "plane", "depth": SEABED},
        "contact": {},
        "structures": [
            {"name": f"basket_{n}", "shape": "box", "size": size, "xyz": xyz} for n, size, xyz in walls
        ],
        "objects": [],
    }
    if sample is not None:
        w, d, h = SAMPLE
        desc["scene"]["objects"].append(
            {
                "name": "sample",
                "shape": "box",
                "size": [d, w, h],
                "mass": SAMPLE_MASS,
                "xyz": [sample[0], sample[1], SEABED - h / 2.0 - 1e-4],
                "rpy": [0.0, 0.0, sample[2]],
            }
        )
    out.write_text(yaml.safe_dump(desc))
    return out


def _joint(model, name: str) -> int:
    return [b.joint_name for b in model.bodies].index(name)


def tool_pose(sim: Simulator, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tool point (world NED), the jaws' direction and the fingers' pivot axis at q."""
    model = sim.model
    placements(model, sim.data, q)
    w = model.body_index("alpha_5_m1_link")
    R, p = sim.data.R_world[w], sim.data.p_world[w]
    return p + R @ np.array([0.0, 0.0, -TOOL]), R @ np.array([0.0, 0.0, -1.0]), R[:, 0]


def pose(sim: Simulator, joints: tuple[float, float, float]) -> np.ndarray:
    """The configuration with the arm at (base, shoulder = elbow, wrist) from the start."""
    model = sim.model
    q = sim.system.initial_q.copy() if sim.system is not None else sim.state.q.copy()
    e, dc, b = joints
    for name, value in zip(ARM, (e, dc, dc, b), strict=True):
        q[model.idx_q[_joint(model, name)]] = value
    return q


def shoulder_for_height(sim: Simulator, e: float, b: float, height: float) -> float:
    """The shoulder (= elbow) angle that puts the tool point ``height`` above the seabed, the
    vehicle at its start (the tool's height falls monotonically from 0.6 to 2.7 rad)."""
    return float(
        brentq(lambda dc: SEABED - float(tool_pose(sim, pose(sim, (e, dc, b)))[0][2]) - height, 0.6, 2.7)
    )


def reach(sim: Simulator, target: np.ndarray, wrist: float, start: np.ndarray) -> np.ndarray:
    """The arm joints (``ARM`` order) that put the tool point at ``target`` (world NED) with
    the vehicle where it is now and the wrist rotate at ``wrist``: base, shoulder and elbow by
    least squares from ``start`` (jaws kept near vertical: shoulder and elbow near equal, 1 cm
    per 0.5 rad of difference), within the joint limits."""
    model = sim.model
    idx = [model.idx_q[_joint(model, n)] for n in ARM]
    lo = np.array([model.joints[_joint(model, n)].lower for n in ARM[:3]]) + 1e-3
    hi = np.array([model.joints[_joint(model, n)].upper for n in ARM[:3]]) - 1e-3
    q = sim.state.q.copy()
    q[idx[3]] = wrist

    def residual(x: np.ndarray) -> np.ndarray:
        q[idx[:3]] = x
        return np.array([*(tool_pose(sim, q)[0] - target), 0.02 * (x[1] - x[2])])

    sol = least_squares(residual, np.clip(start[:3], lo, hi), bounds=(lo, hi), xtol=1e-10)
    return np.array([*sol.x, wrist])


def quintic(s: float) -> tuple[float, float]:
    """Rest-to-rest quintic of s in [0, 1]: value and slope."""
    s = min(max(s, 0.0), 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5, 30 * s**2 - 60 * s**3 + 30 * s**4


class Run:
    """The simulator, the autopilot, the servos and the recording of one demo run."""

    def __init__(self, rate: float, path: Path) -> None:
        system = load(path)
        self.sim = Simulator.from_system(system)
        model, q0 = self.sim.model, system.initial_q
        specs = alpha5_specs(model)
        assert specs is not None  # the Heavy with the Alpha 5
        self.servos = JointServos(model, specs, q=q0)
        hold_loaded(self.servos, model, self.sim.env, q0)
        self.sim.joint_motors = self.servos
        self.dt = 1.0 / rate
        assert self.sim.thrusters is not None
        self.thrusters = self.sim.thrusters
        self.autopilot = ArduSubEmulator(
            "vectored_6dof", directions=self.thrusters.motor_directions(), gains=ARM_GAINS
        )
        self.autopilot.arm(True)
        self.autopilot.set_mode("ALT_HOLD")
        self.every = max(1, round(rate / 400.0))  # ArduSub's 400 Hz loop
        self.k = 0
        self.station: np.ndarray | None = None  # the pilot's (x, y) to hold
        # t, depth, roll, pitch, yaw, and whether the arm moves
        self.track: list[tuple[float, float, float, float, float, bool]] = []

    def pilot(self) -> None:
        """The pilot holding station with the forward and lateral sticks (ALT_HOLD holds depth
        and attitude, not position): a PD on the horizontal offset from where the vehicle was
        when the arm started, in body axes, ``STICK_GAINS`` us per m and per m/s, within
        ±200 us of neutral (the throttle and yaw sticks stay neutral)."""
        if self.station is None:
            return
        q, v = self.sim.state.q, self.sim.state.v
        yaw = quat2euler(q[3:7])[2]
        c, s = math.cos(yaw), math.sin(yaw)
        dx, dy = self.station[0] - q[0], self.station[1] - q[1]
        ex, ey = c * dx + s * dy, -s * dx + c * dy  # the offset in the vehicle's heading frame
        kp, kd = STICK_GAINS
        forward = 1500.0 + float(np.clip(kp * ex - kd * v[0], -200.0, 200.0))
        lateral = 1500.0 + float(np.clip(kp * ey - kd * v[1], -200.0, 200.0))
        self.autopilot.set_rc(np.array([1500.0, 1500.0, 1500.0, 1500.0, forward, lateral]))

    def arm_q(self) -> np.ndarray:
        return np.array([self.sim.state.q[self.servos.iq[self.servos.names.index(n)]] for n in ARM])

    def run_for(self, seconds: float, motion=None) -> None:
        """Step for ``seconds``; ``motion(t)`` gives the servos' setpoints at time t into the
        phase (None: hold)."""
        sim, steps = self.sim, round(seconds / self.dt)
        for n in range(steps):
            if motion is not None:
                motion(n * self.dt)
            if self.k % self.every == 0:
                s = sim.model.q_slice(0)
                self.pilot()
                state = VehicleState.from_free_joint(sim.state.q[s], sim.state.v[sim.model.v_slice(0)])
                outputs = self.autopilot.update(state, self.dt * self.every)
                pwm = self.thrusters.pwm.copy()
                for motor, value in outputs.items():
                    pwm[self.thrusters.motors.index(motor)] = value
                self.thrusters.set_pwm(pwm)
            sim.advance(self.dt, 1)
            self.k += 1
            q = sim.state.q
            self.track.append((sim.state.t, q[2], *quat2euler(q[3:7]), motion is not None))

    def move(self, target: np.ndarray, duration: float) -> None:
        """A rest-to-rest quintic of the arm joints to ``target`` in ``duration`` s."""
        start = self.arm_q()
        delta = target - start

        def motion(t: float) -> None:
            x, dx = quintic(t / duration)
            pos = dict(zip(ARM, (start + delta * x).tolist(), strict=True))
            vel = dict(zip(ARM, (delta * dx / duration).tolist(), strict=True))
            self.servos.command("position", pos, vel)

        self.run_for(duration, motion)

    def jaws(self, position: float, seconds: float) -> None:
        self.servos.command("position", {JAWS: position})
        self.run_for(seconds, lambda t: None)


def _duration(delta: np.ndarray) -> float:
    """A quintic's time for the largest joint change at 80 % of the 0.5 rad/s limit (its peak
    speed is 1.875 times the mean)."""
    return max(2.0, 1.875 * float(np.abs(delta).max()) / 0.4)


def run(rate: float = 1000.0, workdir: Path | None = None) -> Result:
    """The whole pick and place (about 35 s of simulated time)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(workdir or tmp)
        probe = Run(rate, description(folder / "pick_place.yaml"))
        grasp_dc = shoulder_for_height(probe.sim, BASE, WRIST, GRASP_HEIGHT)
        carry_dc = shoulder_for_height(probe.sim, BASE, WRIST, CARRY_HEIGHT)
        lift = (BASE, carry_dc, carry_dc, WRIST)
        over = (BASE + TO_BASKET, carry_dc, carry_dc, WRIST)
        tool, _, pivot = tool_pose(probe.sim, pose(probe.sim, (BASE, grasp_dc, WRIST)))
        basket = tool_pose(probe.sim, pose(probe.sim, (BASE + TO_BASKET, carry_dc, WRIST)))[0]
        sample = (float(tool[0]), float(tool[1]), math.atan2(pivot[1], pivot[0]))
        r = Run(rate, description(folder / "pick_place.yaml", sample, (float(basket[0]), float(basket[1]))))
        sim = r.sim
        i = sim.model.body_index("sample")
        iq = sim.model.idx_q[i]
        log = [
            f"sample at ({sample[0]:.3f}, {sample[1]:.3f}), basket at ({basket[0]:.3f}, {basket[1]:.3f}) (m)"
        ]
        r.station = sim.state.q[:2].copy()  # the vehicle over its start: the pilot holds it there
        r.jaws(OPEN, 3.0)  # settle in ALT_HOLD, open the jaws
        first = len(r.track)
        h = SAMPLE[2]
        above = np.array([tool[0], tool[1], tool[2] - 0.04])
        r.move(np.array(lift), _duration(np.array(lift) - r.arm_q()))  # out, at the carrying height
        # over the sample and straight down to it, from where the vehicle now is, and a correction
        for target, seconds in ((above, None), (tool, 2.0), (tool, 1.0)):
            goal = reach(sim, target, WRIST, r.arm_q())
            r.move(goal, seconds or _duration(goal - r.arm_q()))
        r.jaws(CLOSED, 3.0)
        goal = reach(sim, above, WRIST, r.arm_q())  # straight up off the seabed
        r.move(goal, 2.0)
        r.move(np.array(lift), _duration(np.array(lift) - r.arm_q()))
        lifted = SEABED - h / 2.0 - float(sim.state.q[iq + 2])
        log.append(f"sample lifted {lifted * 100:.1f} cm off the seabed")
        r.move(np.array(over), _duration(np.array(over) - r.arm_q()))
        goal = reach(sim, np.array([basket[0], basket[1], SEABED - CARRY_HEIGHT]), WRIST, r.arm_q())
        r.move(goal, 1.5)
        r.jaws(OPEN, 3.0)
        r.move(np.array(HOME), _duration(np.array(HOME) - r.arm_q()))
        last = len(r.track)
        r.run_for(3.0)  # the sample settles
        p = sim.state.q[iq : iq + 3].copy()
        length, width, height, wall = BASKET
        inside = (
            abs(p[0] - basket[0]) < length / 2.0 - wall
            and abs(p[1] - basket[1]) < width / 2.0 - wall
            and SEABED - height < p[2] < SEABED
        )
        track = np.array(r.track[first:last])
        z, rpy = track[:, 1], np.unwrap(track[:, 2:5], axis=0)
        dz = float(np.abs(z - z[0]).max())
        drpy = np.abs(rpy - rpy[0]).max(axis=0)
        return Result(p, bool(inside), dz, float(drpy[0]), float(drpy[1]), float(drpy[2]), lifted > 0.05, log)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="physics rate, Hz")
    args = parser.parse_args(argv)
    res = run(args.rate)
    for line in res.log:
        print(line)
    print(f"sample at {res.sample.round(3).tolist()} (NED): {'in' if res.in_basket else 'NOT in'} the basket")
    print(
        f"while the arm moved: depth excursion {res.depth_excursion * 100:.1f} cm; roll "
        f"{math.degrees(res.roll_excursion):.2f} deg, pitch {math.degrees(res.pitch_excursion):.2f} deg, "
        f"yaw {math.degrees(res.yaw_excursion):.2f} deg"
    )


if __name__ == "__main__":
    main()
