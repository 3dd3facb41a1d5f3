"""Real-time factor and CPU use of the ``simulator`` node (its own process, BlueROV2 with the
MAVROS shim, 500 Hz physics, 50 Hz publishing, /clock at 200 Hz).

For real_time_factor 1 (paced) and 0 (as fast as possible): the simulated seconds per wall
second over a window, from two /clock samples at its ends, and the node's CPU time over the
same window (from /proc, user + system, in percent of one core). /clock is subscribed only
for the two samples: at 20x real time it carries thousands of messages a second, and
receiving them all would take this process a core that the node is measured without.

Run: ``.venv/bin/python benchmarks/bench_node.py [--seconds S] [--water]`` (part of ``make
bench``; ``--water``: only the tether and waves cases; ``--arm``: only the Heavy with the Reach
Alpha 5 and its trajectory controller; ``--grasp``: only the same among ten objects on a
heightmap seabed, ``config/bluerov2_heavy_alpha5_grasp.yaml``; ``--camera``: only the BlueROV2
with and without a 640 x 480 camera).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

# a domain of this run's own, discovery on loopback only (as the tests): another simulator on the
# machine would otherwise publish /clock into the samples
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(1, 100)))

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))  # browser, net_helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_camera

import rclpy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu
from tf2_msgs.msg import TFMessage


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of a process (MB, VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


LISTENED = {"/odom": Odometry, "/imu": Imu, "/tf": TFMessage, "/mavros/local_position/pose": PoseStamped}


def measure(
    rtf: float,
    seconds: float,
    node,
    physics_rate: float = 500.0,
    extra=(),
    listen: bool = False,
    rss=None,
    started=None,
    count: str | None = None,
    markers: bool = False,
) -> tuple[float, float]:
    """(achieved real-time factor, CPU % of one core) of a node process; with ``listen`` this
    process also subscribes to odometry, IMU, TF and the MAVROS pose (a user's controller and
    RViz), so those messages are built and sent. A list ``rss`` receives (wall seconds into
    the window, the node's resident memory in MB) every second; ``started()`` runs once the
    node is up (e.g. to send it a goal); ``count``: a sensor_msgs/CameraInfo topic whose
    messages in the window are counted into ``measure.counted`` (as frames a wall second and a
    simulated second); ``markers``: this process also subscribes to the RViz markers (the
    node builds them only for a reader)."""
    cmd = [
        sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", "use_sim_time:=true",
        "-p", f"real_time_factor:={rtf}", "-p", f"physics_rate:={physics_rate}", "-p", "publish_rate:=50.0",
        *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = {}

    def on_clock(m):
        last["t"], last["wall"] = m.clock.sec + m.clock.nanosec * 1e-9, time.monotonic()

    def clock_sample(timeout: float) -> tuple[float, float]:
        """(simulated, wall) time of the next /clock message; the subscription is dropped
        again so that this process does not spend a core on thousands of /clock callbacks
        while the node runs."""
        last.clear()
        sub = node.create_subscription(Clock, "/clock", on_clock, 10)
        try:
            end = time.monotonic() + timeout
            while "t" not in last and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.05)
            return last["t"], last["wall"]
        finally:
            node.destroy_subscription(sub)

    others = (
        [  # best effort: MAVROS's topics are SensorDataQoS, and it receives from reliable ones too
            node.create_subscription(T, name, lambda m: None, qos_profile_sensor_data)
            for name, T in LISTENED.items()
        ]
        if listen
        else []
    )
    if markers:
        from visualization_msgs.msg import MarkerArray

        others.append(node.create_subscription(MarkerArray, "/markers", lambda m: None, 10))
    frames: list[float] = []
    if count is not None:
        from sensor_msgs.msg import CameraInfo

        others.append(
            node.create_subscription(CameraInfo, count, lambda _: frames.append(time.monotonic()), 10)
        )
    try:
        clock_sample(60.0)  # the node is up
        if started is not None:
            started()
        time.sleep(2.0)
        t0, w0 = clock_sample(10.0)
        c0 = cpu_seconds(proc.pid)
        next_rss = w0
        while time.monotonic() < w0 + seconds:
            if rss is not None and time.monotonic() >= next_rss:
                rss.append((time.monotonic() - w0, rss_mb(proc.pid)))
                next_rss += 1.0
            if listen or markers or count is not None:
                rclpy.spin_once(node, timeout_sec=0.05)
            else:
                time.sleep(0.05)
        c1, wc = cpu_seconds(proc.pid), time.monotonic()
        t1, w1 = clock_sample(10.0)
    finally:
        for other in others:
            node.destroy_subscription(other)
        proc.terminate()
        proc.wait(timeout=10)
    n = sum(w0 <= w <= wc for w in frames)
    measure.counted = (n / (wc - w0), n / (t1 - t0))  # type: ignore[attr-defined]
    return (t1 - t0) / (w1 - w0), 100.0 * (c1 - c0) / (wc - w0)


def browser(page: str):
    """A headless Debian Chromium showing the browser view (as a user's open tab), or None."""
    from browser import CHROMIUM, DRIVER, headless_chromium

    return headless_chromium(page) if CHROMIUM and DRIVER else None


def views(node, seconds: float) -> None:
    """The node at 1 kHz physics as fast as possible with the views off, with RViz markers, with
    the browser view served and with a headless Chromium showing it (on this 2-core machine the
    browser's software rendering competes with the node for the cores)."""
    import threading

    from net_helpers import free_tcp_port_pair

    from uvms_sim.viz.rerun_view import page_address

    port = free_tcp_port_pair()  # the page, and the stream on the next port
    page = page_address(port, f"rerun+http://127.0.0.1:{port + 1}/proxy")
    print("simulator node, BlueROV2 + MAVROS shim, 1 kHz physics, as fast as possible: the views")
    for label, extra in (
        ("views off (marker_rate 0)", ("-p", "marker_rate:=0.0")),
        ("RViz markers at 10 Hz (default), read", ()),
        ("+ browser view served, no browser", ("-p", f"web_view_port:={port}")),
        ("+ a headless Chromium showing it", ("-p", f"web_view_port:={port}")),
    ):
        holder: dict = {}
        if "Chromium" in label:  # open the page once the node serves it
            threading.Timer(3.0, lambda h=holder: h.setdefault("b", browser(page))).start()
        rtf, cpu = measure(0.0, seconds, node, 1000.0, extra, markers="markers" in label or "+" in label)
        if holder.get("b") is not None:
            holder["b"].quit()
        elif "Chromium" in label:
            label += " (no chromium here: not measured)"
        print(f"  {label:42s}: {rtf:6.1f}x real time, node CPU {cpu:5.1f} % of one core")


def sensors(node, seconds: float) -> None:
    """The Heavy at 1 kHz physics as fast as possible, without sensors and with the five it
    ships with (IMU 100 Hz, magnetometer 50, pressure 20, altimeter and DVL 10), noise on,
    nobody listening and a subscriber on the IMU."""
    import tempfile
    from dataclasses import replace

    from uvms_sim.model import load
    from uvms_sim.model.configs import resolve
    from uvms_sim.model.export import save_yaml

    system = load(resolve("bluerov2_heavy"))
    bare = replace(system, vehicles=tuple(replace(v, sensors=()) for v in system.vehicles))
    path = tempfile.mkdtemp() + "/heavy_without_sensors.yaml"
    save_yaml(bare, path)
    print("simulator node, BlueROV2 Heavy + MAVROS shim, 1 kHz physics, as fast as possible: the sensors")
    for label, description in (("no sensors", path), ("its five sensors, noise on", "bluerov2_heavy")):
        rtf, cpu = measure(0.0, seconds, node, 1000.0, ("-p", f"description:={description}"))
        print(f"  {label:42s}: {rtf:6.1f}x real time, node CPU {cpu:5.1f} % of one core")


def water(node, seconds: float, repeats: int = 3) -> None:
    """The BlueROV2 at 1 kHz physics as fast as possible: in still water, in the shipped
    tethered description's JONSWAP sea (64 components) without its tether, and with its
    50-segment Fathom tether (MoorDyn) in that sea and a 0.5 m/s current; ``repeats`` runs each
    (min / median / max: the machine is shared), and the simulated seconds per CPU second the
    node used (the real-time factor it reaches with a core to itself)."""
    import tempfile

    import yaml

    from uvms_sim.model.configs import resolve

    tethered = yaml.safe_load(Path(resolve("bluerov2_tethered")).read_text())
    tethered["vehicles"][0]["include"] = str(resolve("bluerov2"))
    sea = dict(tethered)
    sea.pop("tethers")
    folder = Path(tempfile.mkdtemp())
    (folder / "sea.yaml").write_text(yaml.safe_dump(sea))
    print("simulator node, BlueROV2 + MAVROS shim, 1 kHz physics, as fast as possible: the working water")
    for label, description in (
        ("still water", "bluerov2"),
        ("JONSWAP sea, 64 components", str(folder / "sea.yaml")),
        ("+ 50-segment tether, 0.5 m/s current", "bluerov2_tethered"),
    ):
        for listen in (False, True):
            extra = ("-p", f"description:={description}")
            runs = sorted(measure(0.0, seconds, node, 1000.0, extra, listen=listen, markers=listen)
                          for _ in range(repeats))  # fmt: skip
            rtfs = [r for r, _ in runs]
            per_core = sorted(r / max(c, 1e-9) * 100.0 for r, c in runs)  # simulated s per CPU s of the node
            who = "odom, imu, tf, mavros pose, markers read" if listen else "no listeners"
            print(
                f"  {label:52s} {who:40s}: {rtfs[0]:6.1f} / {rtfs[len(rtfs) // 2]:6.1f} / {rtfs[-1]:6.1f}x "
                f"real time (min / median / max of {repeats}), node CPU {runs[len(runs) // 2][1]:5.1f} % "
                f"of one core; {per_core[len(per_core) // 2]:6.1f}x real time per CPU second of the node"
            )


def arm(node, seconds: float, description: str = "bluerov2_heavy_alpha5") -> None:
    """BlueROV2 Heavy + Reach Alpha 5 at 1 kHz: the MAVROS shim and the emulated ArduSub, the
    arm's firmware servos and joint_trajectory_controller executing a trajectory for the whole
    window (a slow sweep of the four rotate joints), without and with listeners, disarmed and
    armed in ALT_HOLD, then with the semi-implicit Euler step instead of RK4 (``integrator``);
    then the Heavy alone (disarmed) in the same conditions, for reference.
    Also the simulated seconds per CPU second of the node (the real-time factor it reaches with
    a core to itself: on a shared machine the wall-clock factor follows the load).
    ``description`` ``bluerov2_heavy_alpha5_grasp``: the same over a heightmap seabed with ten
    objects, its contacts detected every 5 ms (``--grasp``)."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    pub = node.create_publisher(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)

    def sweep() -> None:
        msg = JointTrajectory(
            joint_names=["alpha_5_axis_e", "alpha_5_axis_d", "alpha_5_axis_c", "alpha_5_axis_b"]
        )
        for k in range(1, 31):
            p = JointTrajectoryPoint(positions=[3.14 + 0.3 * (k % 2), 1.5, 1.5 + 0.3 * (k % 2), 3.1])
            p.time_from_start.sec = 4 * k
            msg.points.append(p)
        end = time.monotonic() + 3.0
        while time.monotonic() < end and pub.get_subscription_count() == 0:
            rclpy.spin_once(node, timeout_sec=0.05)
        pub.publish(msg)

    def fly() -> None:
        """The sweep, with the vehicle armed in ALT_HOLD through the MAVROS services (as a
        user flies it: the emulated ArduSub then runs its attitude and depth controllers)."""
        from mavros_msgs.srv import CommandBool, SetMode

        sweep()
        for kind, name, request in (
            (SetMode, "/mavros/set_mode", SetMode.Request(custom_mode="ALT_HOLD")),
            (CommandBool, "/mavros/cmd/arming", CommandBool.Request(value=True)),
        ):
            client = node.create_client(kind, name)
            try:
                if not client.wait_for_service(timeout_sec=10.0):
                    raise SystemExit(f"{name}: no such service")
                future = client.call_async(request)
                rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
                reply = future.result()
                if reply is None or not (reply.mode_sent if kind is SetMode else reply.success):
                    raise SystemExit(f"{name}: refused")
            finally:
                node.destroy_client(client)

    scene = ", 10 objects on a heightmap seabed" if description.endswith("_grasp") else ""
    print(
        f"simulator node, BlueROV2 Heavy + Reach Alpha 5{scene}, 1 kHz physics, MAVROS shim, "
        "trajectory controller:"
    )
    cases = [(description, listen, sweep, "rk4") for listen in (False, True)]
    cases += [(description, True, fly, "rk4"), (description, True, sweep, "semi_implicit_euler")]
    cases.append(("bluerov2_heavy", True, None, "rk4"))
    for name, listen, started, integrator in cases:
        extra = ("-p", f"description:={name}", "-p", "marker_rate:=0.0", "-p", f"integrator:={integrator}")
        rtf, cpu = measure(0.0, seconds, node, 1000.0, extra, listen=listen, started=started)
        label = "with listeners (odom, imu, tf, mavros pose)" if listen else "no listeners"
        if started is fly:
            label = "armed in ALT_HOLD, " + label
        if started is None:
            label = "the Heavy alone, " + label
        if integrator != "rk4":
            label = f"{integrator}, " + label
        print(
            f"  as fast as possible, {label:78s}: {rtf:6.1f}x real time, CPU {cpu:5.1f} % of one core; "
            f"{rtf / max(cpu, 1e-9) * 100.0:6.1f}x real time per CPU second of the node"
        )
    node.destroy_publisher(pub)


def camera(node, seconds: float, repeats: int = 3) -> None:
    """The BlueROV2 (no other sensor) at 1 kHz physics as fast as possible, 4 m down over
    benchmarks/bench_camera.py's scene (a 35 m heightmap seabed 10 m down and three
    structures), without a camera, as shipped (its camera and two lights) and with a 640 x 480
    camera at 15 Hz looking 30 degrees down (and the two lights, off),
    noise on, first with nobody subscribed to it (it renders nothing then), then with this
    process subscribed to its camera_info (as a viewer). The camera renders on its own thread at
    its rate of simulated time, or as fast as it can when the physics runs faster (then frames
    are skipped: fewer than 15 a simulated second); printed: the real-time factor, the node's
    CPU and the frames a wall second and a simulated second (min / median / max of ``repeats``
    runs: the machine is shared)."""
    import tempfile

    import yaml
    from bench_camera import scenes

    from uvms_sim.model.configs import resolve

    scene = scenes()["heightmap seabed + 3 structures"]
    seabed = scene.seabed
    description = yaml.safe_load(Path(resolve("bluerov2")).read_text())
    description["scene"] = {
        "seabed": {"type": "heightmap", "spacing": seabed.spacing, "depths": seabed.depths.tolist(),
                   "origin": list(seabed.origin)},
        "structures": [{"name": s.name, "shape": s.shape.kind, "size": list(s.shape.size),
                        "xyz": list(s.shape.xyz)} for s in scene.structures],
    }  # fmt: skip
    vehicle = description["vehicles"][0]
    vehicle["initial_pose"] = {"position": [0.0, 0.0, 4.0], "rpy": [0.0, 0.0, 0.0]}
    folder = Path(tempfile.mkdtemp())
    (folder / "shipped.yaml").write_text(yaml.safe_dump(description))  # its camera and lights
    shipped = vehicle.pop("sensors", [])
    (folder / "no_camera.yaml").write_text(yaml.safe_dump(description))
    lights = [s for s in shipped if s["type"] == "light"]
    vehicle["sensors"] = [
        {"type": "camera", "name": "front", "position": [0.2, 0.0, 0.0], "tilt": -0.5236},
        *lights,
    ]
    (folder / "camera.yaml").write_text(yaml.safe_dump(description))
    print("simulator node, BlueROV2 + MAVROS shim, 1 kHz physics, as fast as possible: a camera, noise on")
    for label, name, listened in (
        ("no camera", "no_camera", False),
        ("shipped BlueROV2 (camera, lights), nobody subscribed", "shipped", False),
        ("640 x 480 camera, nobody subscribed", "camera", False),
        ("640 x 480 camera, viewed", "camera", True),
    ):
        runs = []
        for _ in range(repeats):
            extra = ("-p", f"description:={folder / name}.yaml", "-p", "marker_rate:=0.0")
            count = "/camera/front/camera_info" if listened else None
            rtf, cpu = measure(0.0, seconds, node, 1000.0, extra, count=count)
            runs.append((rtf, cpu, *measure.counted))  # type: ignore[attr-defined]
        runs.sort()
        rtfs, mid = [r[0] for r in runs], runs[len(runs) // 2]
        frames = f", {mid[2]:5.1f} frames a wall second ({mid[3]:4.1f} a simulated second)" if mid[2] else ""
        print(
            f"  {label:52s}: {rtfs[0]:6.1f} / {rtfs[len(rtfs) // 2]:6.1f} / {rtfs[-1]:6.1f}x real time "
            f"(min / median / max of {repeats}), node CPU {mid[1]:5.1f} % of one core{frames}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--water", action="store_true", help="only the working water (tether and waves)")
    parser.add_argument("--arm", action="store_true", help="only the Heavy with the Reach Alpha 5")
    parser.add_argument("--grasp", action="store_true", help="only the Heavy, the Alpha 5 and 10 objects")
    parser.add_argument("--camera", action="store_true", help="only the BlueROV2 with a 640 x 480 camera")
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("bench_clock")
    if args.grasp or args.camera:
        if args.grasp:
            arm(node, args.seconds, "bluerov2_heavy_alpha5_grasp")
        if args.camera:
            camera(node, args.seconds)
        node.destroy_node()
        rclpy.shutdown()
        return
    if args.arm:
        arm(node, args.seconds)
        node.destroy_node()
        rclpy.shutdown()
        return
    if args.water:
        water(node, args.seconds)
        node.destroy_node()
        rclpy.shutdown()
        return
    print("simulator node, BlueROV2 + MAVROS shim, 500 Hz physics, 50 Hz publishing, /clock 200 Hz")
    for rtf in (1.0, 0.0):
        achieved, cpu = measure(rtf, args.seconds, node)
        label = "paced at 1.0" if rtf else "as fast as possible"
        print(f"  real_time_factor {label:20s}: achieved {achieved:5.2f}, CPU {cpu:5.1f} % of one core")
    views(node, args.seconds)
    sensors(node, args.seconds)
    water(node, args.seconds)
    arm(node, args.seconds)
    arm(node, args.seconds, "bluerov2_heavy_alpha5_grasp")
    camera(node, args.seconds)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
