"""Demo: a simulated BlueROV2 flown by a scripted pilot through MAVROS topics.

The ``simulator`` node runs a BlueROV2 (Heavy configuration, which holds pitch as well as
roll in ALT_HOLD) behind its MAVROS-compatible ArduSub interface, in its
own process (as ``ros2 run uvms_sim simulator`` would). A client node in this process, written
as a user would write it for the real vehicle (mavros_msgs only), sets ALT_HOLD, arms, dives
from 0.3 m to 2 m with the throttle stick, drives a 4-leg square (turning with the yaw stick
under its own heading loop, driving with the forward stick), surfaces and disarms. Both nodes
use simulated time (/clock). At the end it prints
the corners reached, how well depth was held and the real-time factor, and writes
``demo_output/trajectory.png``. Run with ``make demo`` or
``python -m uvms_sim.demo [--rtf R] [--leg SECONDS] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import rclpy
from geometry_msgs.msg import PoseStamped
from mavros_msgs.msg import OverrideRCIn, State
from mavros_msgs.srv import CommandBool, SetMode
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from std_msgs.msg import Float64
from transforms3d.euler import quat2euler

from .viz.web_front import check_bind

DIVE_DEPTH = 2.0  # m
START_DEPTH = 0.3  # m
FORWARD_STICK = 1620  # us: about 0.7 m/s
YAW_GAIN = 600.0  # us of yaw stick per rad of heading error (clipped to +-300)


class Pilot:
    """The user's side: MAVROS topics and services only."""

    def __init__(self, node, executor) -> None:
        self.node, self.executor = node, executor
        self.pose: PoseStamped | None = None
        self.state: State | None = None
        self.alt = 0.0
        self.track: list[tuple[float, float, float, float, float]] = []  # t, x, y, depth, yaw
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(State, "mavros/state", self.on_state, latched)
        node.create_subscription(
            PoseStamped, "mavros/local_position/pose", self.on_pose, qos_profile_sensor_data
        )
        node.create_subscription(
            Float64, "mavros/global_position/rel_alt", self.on_alt, qos_profile_sensor_data
        )
        self.rc = node.create_publisher(OverrideRCIn, "mavros/rc/override", 10)
        self.teleport = node.create_publisher(PoseStamped, "set_pose", 10)
        self.arming = node.create_client(CommandBool, "mavros/cmd/arming")
        self.set_mode = node.create_client(SetMode, "mavros/set_mode")

    def on_state(self, msg: State) -> None:
        self.state = msg

    def on_alt(self, msg: Float64) -> None:
        self.alt = msg.data

    def on_pose(self, msg: PoseStamped) -> None:
        self.pose = msg
        o = msg.pose.orientation
        yaw = quat2euler((o.w, o.x, o.y, o.z), "sxyz")[2]
        p = msg.pose.position
        self.track.append((self.now(), p.x, p.y, -p.z, yaw))

    # -- helpers --------------------------------------------------------------------------
    def now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    @property
    def depth(self) -> float:
        assert self.pose is not None, "no local_position/pose yet"
        return -self.pose.pose.position.z

    @property
    def yaw(self) -> float:
        return self.track[-1][4]

    def sticks(self, throttle: int = 1500, yaw: int = 1500, forward: int = 1500) -> None:
        self.rc.publish(
            OverrideRCIn(channels=[1500, 1500, throttle, yaw, forward, 1500, 1500, 1500] + [65535] * 10)
        )

    def spin_until(self, done, timeout: float, control=None) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if done():
                return True
            if control is not None:
                control()
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def call(self, client, request):
        assert client.wait_for_service(timeout_sec=10.0), client.srv_name
        future = client.call_async(request)
        self.spin_until(future.done, 10.0)
        return future.result()

    def hold_heading_stick(self, target: float) -> int:
        err = math.remainder(target - self.yaw, 2 * math.pi)  # ENU: + = turn left
        return int(1500 - max(-300.0, min(300.0, YAW_GAIN * err)))  # ArduSub yaw + = turn right


def run(
    rtf: float,
    leg: float,
    out_dir: Path,
    view: int = 0,
    view_bind: str = "127.0.0.1",
    view_camera: str = "world",
) -> dict:
    import subprocess
    import sys

    sim_cmd = [
        sys.executable, "-m", "uvms_sim.ros.node", "--ros-args",
        "-p", "description:=bluerov2_heavy", "-p", "use_sim_time:=true", "-p", f"real_time_factor:={rtf}",
        "-p", f"web_view_port:={view}", "-p", f"web_view_bind:={view_bind}",
        "-p", f"web_view_camera:={view_camera}",
    ]  # fmt: skip
    if view:
        print(f"browser view on port {view}: open the address in the simulator's first log line")
    simulator = subprocess.Popen(sim_cmd)
    rclpy.init()
    client = rclpy.create_node("demo_pilot", parameter_overrides=[Parameter("use_sim_time", value=True)])
    executor = SingleThreadedExecutor()
    executor.add_node(client)
    pilot = Pilot(client, executor)
    corners: list = []
    leg_depths: list = []
    wall0, sim_start = time.monotonic(), 0.0
    try:
        up = pilot.spin_until(
            lambda: (
                simulator.poll() is not None
                or (pilot.state is not None and pilot.pose is not None and pilot.track)
            ),
            60.0,
        )
        if simulator.poll() is not None:  # it said why (a taken port, a bad option) on its stderr
            raise SystemExit(f"uvms-sim demo: error: the simulator stopped (exit {simulator.returncode})")
        assert up, "no state from the simulator in 60 s"
        wall0, sim_start = time.monotonic(), pilot.now()
        start = PoseStamped()
        start.pose.position.z = -START_DEPTH
        start.pose.orientation.w = 1.0
        assert pilot.spin_until(
            lambda: abs(pilot.depth - START_DEPTH) < 0.01, 10.0, lambda: pilot.teleport.publish(start)
        )
        pilot.track.clear()  # the plot starts at the surface
        assert pilot.spin_until(lambda: len(pilot.track) > 2, 10.0)
        assert pilot.call(pilot.set_mode, SetMode.Request(custom_mode="ALT_HOLD")).mode_sent
        assert pilot.call(pilot.arming, CommandBool.Request(value=True)).success
        heading = pilot.yaw
        # dive with the throttle stick (1400 us: 75/450 of PILOT_SPEED_UP, about
        # 0.33 m/s); ALT_HOLD brings its depth target to rest at PILOT_ACCEL_Z once the stick is
        # released (and the vehicle follows it), about 0.2 m further down here, so the pilot lets
        # go that much before 2 m
        assert pilot.spin_until(
            lambda: pilot.depth > DIVE_DEPTH - 0.22,
            60.0,
            lambda: pilot.sticks(throttle=1400, yaw=pilot.hold_heading_stick(heading)),
        )
        pilot.spin_until(lambda: False, 3.0, lambda: pilot.sticks(yaw=pilot.hold_heading_stick(heading)))
        corners.append(pilot.track[-1])
        for k in range(4):
            target = heading - k * math.pi / 2  # a square turning right (clockwise from above)
            pilot.spin_until(
                lambda t=target: (
                    abs(math.remainder(t - pilot.yaw, 2 * math.pi)) < math.radians(2.0)
                    and abs(pilot.track[-1][4] - pilot.track[-2][4]) < 1e-3
                ),
                60.0,
                lambda t=target: pilot.sticks(yaw=pilot.hold_heading_stick(t)),
            )
            t_end = pilot.now() + leg
            pilot.spin_until(
                lambda t=t_end: pilot.now() > t,
                120.0,
                lambda t=target: pilot.sticks(forward=FORWARD_STICK, yaw=pilot.hold_heading_stick(t)),
            )
            leg_depths.append(pilot.depth)
            pilot.spin_until(
                lambda: False, 2.0, lambda t=target: pilot.sticks(yaw=pilot.hold_heading_stick(t))
            )
            corners.append(pilot.track[-1])
        assert pilot.spin_until(lambda: pilot.depth < START_DEPTH, 60.0, lambda: pilot.sticks(throttle=1700))
        pilot.sticks()
        assert pilot.call(pilot.arming, CommandBool.Request(value=False)).success
        pilot.spin_until(lambda: pilot.state is not None and not pilot.state.armed, 5.0)
    finally:
        wall = time.monotonic() - wall0
        sim_time = pilot.now() - sim_start if pilot.track else 0.0
        executor.shutdown()
        client.destroy_node()
        rclpy.shutdown()
        simulator.terminate()
        simulator.wait(timeout=10)
    png = plot(pilot.track, corners, out_dir)
    square = [(c[1], c[2]) for c in corners[1:]]
    return {
        "sim_time": sim_time,
        "wall_time": wall,
        "real_time_factor": sim_time / wall,
        "corners_enu": square,
        "leg_depths": leg_depths,
        "start": (corners[0][1], corners[0][2]),
        "plot": png,
        "pose_messages": len(pilot.track),
    }


def plot(track, corners, out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, x, y, depth, _ = zip(*track, strict=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / "trajectory.png"
    fig, (ax, az) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax.plot(x, y, "-", label="base_link in map (ENU)")
    ax.plot([c[1] for c in corners], [c[2] for c in corners], "rs", label="corners")
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True)
    ax.legend()
    ax.set_title("uvms_sim demo: BlueROV2 square in ALT_HOLD")
    az.plot(t, depth)
    az.invert_yaxis()
    az.set_xlabel("simulated time [s]")
    az.set_ylabel("depth [m]")
    az.grid(True)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The demo's options (``python -m uvms_sim.demo`` and ``uvms-sim demo``)."""
    parser.add_argument(
        "--rtf",
        type=float,
        default=0.0,
        help="real-time factor of the simulator (default 0: as fast as possible)",
    )
    parser.add_argument(
        "--leg", type=float, default=8.0, help="seconds of forward stick per side of the square"
    )
    parser.add_argument("--out", type=Path, default=Path("demo_output"))
    parser.add_argument(
        "--view",
        type=int,
        default=0,
        metavar="PORT",
        help="serve the browser view on this port (e.g. 9090; its stream on PORT+1); best with --rtf 1",
    )
    parser.add_argument(
        "--view-bind",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="the address the browser view listens on (default 127.0.0.1: this machine only; "
        "0.0.0.0: every network interface, anyone who reaches this machine can watch)",
    )
    parser.add_argument(
        "--view-camera",
        default="world",
        choices=("world", "vehicle"),
        help="the 3D view shown first: fixed in the world (default) or fixed to the vehicle",
    )
    return parser


def report(args: argparse.Namespace) -> None:
    """Run the demo and print its report."""
    if not 0 <= args.view <= 65534:
        raise SystemExit(f"uvms-sim demo: error: --view {args.view}: a port in 1-65534 (0: off)")
    try:
        check_bind(args.view_bind)
    except ValueError as exc:
        raise SystemExit(f"uvms-sim demo: error: --view-bind: {exc}") from None
    r = run(args.rtf, args.leg, args.out, args.view, args.view_bind, args.view_camera)
    print("uvms_sim demo report (BlueROV2 through MAVROS topics: ALT_HOLD, arm, dive, square, surface)")
    rtf = r["real_time_factor"]
    print(f"  simulated {r['sim_time']:.1f} s in {r['wall_time']:.1f} s wall: real-time factor {rtf:.2f}")
    print(f"  dived to {DIVE_DEPTH:.1f} m at x = {r['start'][0]:.2f}, y = {r['start'][1]:.2f} (ENU)")
    for k, (x, y) in enumerate(r["corners_enu"]):
        depth = r["leg_depths"][k]
        print(f"  corner {k + 1}: x = {x:6.2f} m, y = {y:6.2f} m, depth after the leg {depth:.2f} m")
    print(f"  pose messages received: {r['pose_messages']}; trajectory plot: {r['plot']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="uvms-sim demo", description=__doc__.splitlines()[0])
    report(add_arguments(parser).parse_args(argv))


if __name__ == "__main__":
    main()
