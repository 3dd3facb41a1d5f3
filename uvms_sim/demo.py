"""Demo: a BlueROV2 simulator node and a scripted client talking over ROS 2 topics.

The client publishes body wrenches on ``cmd_wrench`` (forward, turn, forward) and listens to
``odom`` like any user node would, closing a roll/pitch PD loop through those two topics (as
ArduSub's STABILIZE does: the BlueROV2's Munk moment pitches it over at speed otherwise); at
the end it prints where the vehicle went and the real-time factor, and writes a trajectory
plot. Run with ``make demo`` or
``python -m uvms_sim.demo [--seconds S] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import rclpy
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from transforms3d.euler import quat2euler

from .ros.node import SimulatorNode

# (seconds, surge force N in base_link FLU, heading change from the start, deg, ENU: + = left)
SCRIPT = ((8.0, 30.0, 0.0), (6.0, 0.0, 90.0), (8.0, 30.0, 90.0))
KP, KD = 8.0, 2.0  # roll/pitch/yaw PD gains of the client's attitude loop (N m/rad, N m s/rad)


def run(seconds_scale: float, out_dir: Path) -> dict:
    rclpy.init()
    sim = SimulatorNode()
    client = rclpy.create_node("demo_client")
    executor = SingleThreadedExecutor()
    executor.add_node(sim)
    executor.add_node(client)
    track: list[tuple[float, float, float, float]] = []
    attitude = {"moment": (0.0, 0.0, 0.0), "heading": None, "target": 0.0}

    def on_odom(msg: Odometry) -> None:
        p = msg.pose.pose.position
        o = msg.pose.pose.orientation
        roll, pitch, yaw = quat2euler((o.w, o.x, o.y, o.z), "sxyz")
        if attitude["heading"] is None:
            attitude["heading"] = yaw
        w = msg.twist.twist.angular
        err = math.remainder(attitude["heading"] + attitude["target"] - yaw, 2 * math.pi)
        attitude["moment"] = (-KP * roll - KD * w.x, -KP * pitch - KD * w.y, KP * err - KD * w.z)
        track.append((sim.sim.state.t, p.x, p.y, yaw))

    client.create_subscription(Odometry, "odom", on_odom, 10)
    pub = client.create_publisher(WrenchStamped, "cmd_wrench", 10)
    wall0 = time.monotonic()
    try:
        for duration, surge, heading_change in SCRIPT:
            end = sim.sim.state.t + duration * seconds_scale
            attitude["target"] = math.radians(heading_change)
            cmd = WrenchStamped()
            cmd.header.frame_id = "base_link"
            cmd.wrench.force.x = surge
            while sim.sim.state.t < end:
                cmd.wrench.torque.x, cmd.wrench.torque.y, cmd.wrench.torque.z = attitude["moment"]
                pub.publish(cmd)
                executor.spin_once(timeout_sec=0.02)
                if not sim.thread.is_alive():
                    raise RuntimeError("the simulator's physics thread stopped")
    finally:
        wall = time.monotonic() - wall0
        executor.shutdown()
        sim.destroy_node()
        client.destroy_node()
        rclpy.shutdown()
    t, x, y, yaw = zip(*track, strict=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / "trajectory.png"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(x, y, "-", label="base_link in odom (ENU)")
    ax.plot(x[0], y[0], "go", label="start")
    ax.plot(x[-1], y[-1], "rs", label="end")
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(True)
    ax.legend()
    ax.set_title("uvms_sim demo: BlueROV2, forward - turn - forward")
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return {
        "sim_time": t[-1],
        "wall_time": wall,
        "real_time_factor": t[-1] / wall,
        "final_position_enu": (x[-1], y[-1]),
        "heading_change_deg": math.degrees(math.remainder(yaw[-1] - yaw[0], 2 * math.pi)),
        "odometry_messages": len(track),
        "plot": png,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds-scale", type=float, default=1.0, help="stretch or shrink the script")
    parser.add_argument("--out", type=Path, default=Path("demo_output"))
    args = parser.parse_args()
    r = run(args.seconds_scale, args.out)
    print("uvms_sim demo report")
    rtf = r["real_time_factor"]
    print(f"  simulated {r['sim_time']:.2f} s in {r['wall_time']:.2f} s wall: real-time factor {rtf:.2f}")
    print(f"  odometry messages received by the client: {r['odometry_messages']}")
    x, y = r["final_position_enu"]
    print(f"  final position in odom (ENU): x = {x:.2f} m, y = {y:.2f} m")
    print(f"  heading change: {r['heading_change_deg']:.1f} deg")
    print(f"  trajectory plot: {r['plot']}")


if __name__ == "__main__":
    main()
