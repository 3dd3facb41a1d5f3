"""The node and the commands as a user meets them: --help, Ctrl-C, the start summary, a shared
world frame for vehicles in separate nodes, MAVROS frame ids that exist in TF, live replay of a
bag that logs commands only on change, and ``uvms-sim record`` / ``echo`` over real DDS."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from ros_helpers import ros_context, simulator, spin_until
from tf2_msgs.msg import TFMessage

pytestmark = pytest.mark.ros
BIN = Path(sys.executable).parent


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``uvms-sim ARGS`` in its own process, its output captured."""
    return subprocess.run(
        [BIN / "uvms-sim", *args], check=False, capture_output=True, text=True, timeout=timeout
    )


def test_simulator_help_and_unknown_arguments():
    """``simulator --help`` prints the parameters and exits 0 without starting a node; an
    unknown argument is a one-line usage error (exit 2)."""
    run = subprocess.run(
        [BIN / "simulator", "--help"], check=False, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and "world_frame" in run.stdout and "--ros-args" in run.stdout
    assert "[INFO]" not in run.stdout + run.stderr
    bad = subprocess.run(
        [BIN / "simulator", "--bogus"], check=False, capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2 and "unrecognized arguments: --bogus" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_version_intermixed_arguments_and_the_frame_error():
    """``--version`` of both commands (the package's version, as setup.py and package.xml);
    topics after options (``record OUT --duration 3 odom``) and recordings after options are
    taken, as argparse's intermixed parsing does; a wrong ``ardusub_frame`` names every value
    it can take, ``auto`` and ``none`` included, in one line (exit 2)."""
    from uvms_sim import __version__
    from uvms_sim.cli import parser

    for command in ("uvms-sim", "simulator"):
        run = subprocess.run([BIN / command, "--version"], check=False, capture_output=True, text=True,
                             timeout=60)  # fmt: skip
        assert run.returncode == 0 and run.stdout.strip() == f"{command} {__version__}", run
    args = parser().parse_args(["record", "out", "--duration", "3", "odom", "--storage", "mcap", "imu"])
    assert args.topics == ["odom", "imu"] and args.duration == 3.0 and args.storage == "mcap"
    args = parser().parse_args(["replay", "a.bag", "--config", "bluerov2", "b.bag", "--window", "12"])
    assert args.recordings == ["a.bag", "b.bag"] and args.window == 12.0
    cmd = [BIN / "simulator", "--ros-args", "-p", "ardusub_frame:=vectored7", "-p", "description:=bluerov2"]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    line = out.stderr.strip()
    assert out.returncode == 2 and "\n" not in line, out
    assert "'vectored7'" in line and all(f in line for f in ("auto", "none", "vectored", "vectored_6dof")), (
        line
    )


def test_progress_is_a_line_per_tenth_in_a_pipe_and_one_line_on_a_terminal():
    import io

    from uvms_sim.cli.progress import Progress

    pipe = io.StringIO()
    progress = Progress("sweep x.yaml", pipe)
    for done in range(1, 101):
        progress.update(done, 100)
    progress.close()
    lines = pipe.getvalue().splitlines()
    assert (
        len(lines) == 11 and lines[-1].startswith("sweep x.yaml: 100 of 100") and "\r" not in pipe.getvalue()
    )

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    progress = Progress("sweep x.yaml", tty)
    for done in range(1, 101):
        progress.update(done, 100, "1 lost")
    progress.close()
    assert tty.getvalue().count("\r") == 100 and tty.getvalue().count("\n") == 1
    assert "100 of 100, 1 lost" in tty.getvalue()


@pytest.mark.parametrize("delay", [0.2, 0.6, 0.8, 1.0, 3.0])
def test_ctrl_c_at_any_moment_ends_without_a_traceback(delay):
    """SIGINT while Python loads, while the node is built, or while it runs (and a second one
    while it shuts down): no traceback; exit 0 once running, 130 before (or killed by the
    signal, -2, while the ROS wheels' start-up hook re-executes Python, before Python handles
    signals)."""
    proc = subprocess.Popen(
        [BIN / "simulator", "--ros-args", "-p", "description:=bluerov2_heavy"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert "Traceback" not in out, out
    assert proc.returncode in (0, 130, -signal.SIGINT), out
    if "bluerov2_heavy from" in out:  # the summary line: it was running
        assert "1 vehicle(s): bluerov2_heavy (8 thrusters, emulated ArduSub vectored_6dof" in out


def test_ctrl_c_inside_an_extensions_init_exits_130_and_other_import_errors_still_raise():
    """Ctrl-C while a pybind11 extension initialises (scipy's HiGHS, seen in CI at 1.0 s)
    arrives as ``ImportError: initialization failed`` raised from the KeyboardInterrupt: the
    entry point ends quietly with 130, as for a Ctrl-C anywhere else; an ImportError of its
    own, and a missing module other than the interface packages, still propagate."""
    from uvms_sim.entry import _run

    def interrupted():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc

    def broken():
        raise ImportError("initialization failed")

    def missing():
        raise ModuleNotFoundError("No module named 'nothing_here'", name="nothing_here")

    with pytest.raises(SystemExit) as code:
        _run(lambda: interrupted)
    assert code.value.code == 130
    for target in (broken, missing):
        with pytest.raises(ImportError):
            _run(lambda t=target: t)


def test_summary_line_says_what_runs():
    with simulator(description="bluerov2", use_sim_time=True, real_time_factor=0.0) as (sim, _u, _e):
        line = sim.summary()
    assert "bluerov2 from" in line and "bluerov2.yaml" in line
    assert "1 vehicle(s): bluerov2 (6 thrusters, emulated ArduSub vectored on mavros/)" in line
    assert "6 DOF" in line and "TF map -> odom -> base_link" in line
    # /clock's 200 Hz in whole steps of 2 ms: every 2 steps
    assert "physics 500 Hz (rk4), publish 50 Hz" in line and "simulated time (/clock at 250 Hz)" in line
    assert "as fast as possible" in line


def test_the_integrator_is_chosen_by_name():
    """``integrator``: the step the node's simulator takes, said in the summary; a name that is
    not one is refused at start naming the choices."""
    with simulator(description="bluerov2", integrator="semi_implicit_euler") as (sim, _u, _e):
        assert sim.sim.method == "semi_implicit_euler"
        assert "physics 500 Hz (semi_implicit_euler)" in sim.summary()
    with pytest.raises(ValueError, match="integrator: expected one of rk4, semi_implicit_euler, got 'euler'"):
        with simulator(integrator="euler"):
            pass


def _node(ctx, ns, params):
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from uvms_sim.ros.node import SimulatorNode

    node = SimulatorNode(
        context=ctx, namespace=ns, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
    )
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    return node, executor


def _yaw(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_vehicles_in_separate_nodes_share_a_world_frame():
    """Two simulator nodes (rov1, rov2, frame prefixes) each publish map -> <prefix>odom from
    their ``world_offset`` on /tf_static; composing it with the odometry places both vehicles
    in ``map``, 4 m apart as configured. mavros/local_position is stamped map /
    rov1/base_link (frames in the TF tree) and is that same world pose."""
    import rclpy

    with ros_context() as (ctx, executor):
        offsets = {"rov1": [0.0, 0.0, 0.0], "rov2": [4.0, 0.0, math.pi / 2]}
        nodes = [
            _node(ctx, ns, {"description": "bluerov2", "frame_prefix": f"{ns}/", "world_offset": offset})
            for ns, offset in offsets.items()
        ]
        user = rclpy.create_node("user", context=ctx)
        executor.add_node(user)
        static: dict = {}
        got: dict = {}
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)

        def on_static(msg: TFMessage) -> None:
            for t in msg.transforms:
                static[(t.header.frame_id, t.child_frame_id)] = t.transform

        user.create_subscription(TFMessage, "/tf_static", on_static, latched)
        for ns in ("rov1", "rov2"):
            user.create_subscription(Odometry, f"/{ns}/odom", lambda m, ns=ns: got.__setitem__(ns, m), 10)
        user.create_subscription(
            PoseStamped, "/rov2/mavros/local_position/pose", lambda m: got.__setitem__("pose", m),
            qos_profile_sensor_data,
        )  # fmt: skip
        user.create_subscription(
            Odometry, "/rov2/mavros/local_position/odom", lambda m: got.__setitem__("lodom", m),
            qos_profile_sensor_data,
        )  # fmt: skip
        try:
            keys = {("map", "rov1/odom"), ("map", "rov2/odom")}
            assert spin_until(
                executor, lambda: keys <= set(static) and {"rov1", "rov2", "pose", "lodom"} <= set(got)
            )
            world = {}
            for ns in ("rov1", "rov2"):
                tf = static[("map", f"{ns}/odom")]
                yaw = _yaw(tf.rotation)
                p = got[ns].pose.pose.position
                c, s = math.cos(yaw), math.sin(yaw)
                world[ns] = np.array(
                    [tf.translation.x + c * p.x - s * p.y, tf.translation.y + s * p.x + c * p.y, p.z]
                )
            assert static[("map", "rov2/odom")].translation.x == 4.0
            assert _yaw(static[("map", "rov2/odom")].rotation) == pytest.approx(math.pi / 2)
            assert np.linalg.norm(world["rov2"][:2] - world["rov1"][:2]) == pytest.approx(4.0, abs=0.05)
            pose, lodom = got["pose"], got["lodom"]
            assert pose.header.frame_id == "map" and lodom.header.frame_id == "map"
            assert lodom.child_frame_id == "rov2/base_link"
            assert pose.pose.position.x == pytest.approx(world["rov2"][0], abs=0.05)
            assert pose.pose.position.y == pytest.approx(world["rov2"][1], abs=0.05)
            odom_yaw = _yaw(got["rov2"].pose.pose.orientation)
            turn = _yaw(pose.pose.orientation) - (odom_yaw + math.pi / 2)
            assert abs(math.remainder(turn, 2 * math.pi)) < 0.02
        finally:
            for node, ex in nodes:
                ex.shutdown()
                node.destroy_node()


def test_frame_id_parameters_and_a_node_without_world_frame():
    """``local_position_frame_id`` / ``_child_frame_id`` stamp local_position as MAVROS's do;
    ``world_frame`` "" publishes no world transform and local_position falls back to odom."""
    with simulator(world_frame="", local_position_child_frame_id="fcu") as (_sim, user, executor):
        got: dict = {}
        user.create_subscription(
            Odometry, "mavros/local_position/odom", lambda m: got.__setitem__("o", m), qos_profile_sensor_data
        )
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(TFMessage, "/tf_static", lambda m: got.__setitem__("s", m), latched)
        assert spin_until(executor, lambda: {"o", "s"} <= set(got))
        assert got["o"].header.frame_id == "odom" and got["o"].child_frame_id == "fcu"
        assert all(t.header.frame_id != "map" for t in got["s"].transforms)
    with pytest.raises(ValueError, match="world_offset: expected 3 finite numbers"):
        with simulator(world_offset=[1.0, float("nan"), 0.0]):
            pass


def test_live_replay_holds_commands_logged_only_on_change(tmp_path):
    """A bag with a command change every 2 s (a log that records changes only): played live
    into a node whose command_timeout is 0.5 s, the thrusters hold each command for its whole
    2 s (the player repeats the last one every 0.1 s) and never fall to neutral."""
    from uvms_sim.replay.bag import rcout_message, read_bag, typestore, write_bag
    from uvms_sim.ros.bag_player import play

    start = 1_700_000_000 * 10**9
    store = typestore()
    pwm = [[1500] * 4 + [p] * 4 for p in (1700, 1650, 1700)]
    cmds = [(start + k * 2 * 10**9, rcout_message(store, start + k * 2 * 10**9, pwm[k])) for k in range(3)]
    write_bag(tmp_path / "sparse", {"/mavros/rc/out": ("mavros_msgs/msg/RCOut", cmds)})
    bag = read_bag(tmp_path / "sparse")
    with simulator(description="bluerov2_heavy", ardusub_frame="none", command_timeout=0.5) as (
        sim,
        _u,
        executor,
    ):
        result: dict = {}
        player = threading.Thread(target=lambda: result.setdefault("rc", play(bag, context=sim.context)))
        player.start()
        seen = []
        while player.is_alive():
            seen.append(float(sim.sim.thrusters.pwm[4]))
            executor.spin_once(timeout_sec=0.05)
        player.join()
        assert result["rc"] == 0
        assert len(seen) > 60
        started = seen[next(k for k, v in enumerate(seen) if v != 1500.0) :]
        assert min(started) >= 1650.0, "dropped to neutral between logged changes"


def test_record_and_echo_without_ros2_cli(tmp_path):
    """``uvms-sim record`` (its own process) writes the live topics of a running simulator into
    a rosbag2 directory that ``uvms-sim replay``'s reader takes (rc/out commands, odometry),
    with the scene a viewer needs (the latched ``robot_description``, ``markers``);
    ``uvms-sim echo odom --count 1`` prints one Odometry as YAML; an existing output directory
    and a topic that never appears are one-line errors."""
    import yaml

    from uvms_sim.replay.bag import read_bag

    env = dict(os.environ)
    with simulator(description="bluerov2_heavy") as (_sim, _user, executor):
        out = tmp_path / "live"
        rec = subprocess.Popen(
            [BIN / "uvms-sim", "record", str(out), "/odom", "/mavros/rc/out", "/robot_description",
             "/markers", "/nothing", "--duration", "8", "--storage", "mcap"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        echo = subprocess.run(
            [BIN / "uvms-sim", "echo", "odom", "--count", "1", "--timeout", "30"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        while rec.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        log = rec.communicate()[0]
        assert rec.returncode == 0, log
        assert "not recorded: /nothing: no publisher seen" in log
        assert echo.returncode == 0, echo.stderr
        first = yaml.safe_load(echo.stdout.split("---")[0])
        assert first["header"]["frame_id"] == "odom" and first["child_frame_id"] == "base_link"
        bag = read_bag(out)
        assert bag.command_topic == "/mavros/rc/out" and bag.odometry_topic == "/odom"
        assert len(bag.commands.t) > 20 and len(bag.odometry.t) > 20
        # the scene for the viewers: the latched URDF and the markers are in the recording
        assert bag.ignored.get("/robot_description") == 1 and bag.ignored.get("/markers", 0) > 5
        again = cli("record", str(out))
        assert again.returncode == 2 and "exists" in again.stderr
        none = cli("echo", "/no_such_topic", "--timeout", "1")
        assert none.returncode == 1 and "no publisher of /no_such_topic" in none.stderr


def test_demo_subcommand_and_replay_live_without_config(tmp_path):
    """``uvms-sim demo`` takes the demo's own options; ``replay BAG --live`` needs no --config,
    and a replay without --live and without --config says so in one line."""
    run = cli("demo", "--help")
    assert run.returncode == 0 and "--rtf" in run.stdout and "--leg" in run.stdout
    from uvms_sim.replay.bag import rcout_message, typestore, write_bag

    store = typestore()
    write_bag(
        tmp_path / "b",
        {"/mavros/rc/out": ("mavros_msgs/msg/RCOut", [(10**9, rcout_message(store, 10**9, [1500] * 8))])},
    )
    no_config = cli("replay", str(tmp_path / "b"))
    assert no_config.returncode == 2 and "needs --config" in no_config.stderr


def test_replay_live_ends_quietly_on_ctrl_c(tmp_path):
    """``uvms-sim replay BAG --live`` stopped with Ctrl-C in the middle of a 30 s bag: one line
    saying where it stopped, exit 130, no traceback (rclpy shuts its context down on SIGINT
    while the player publishes)."""
    from uvms_sim.replay.bag import rcout_message, typestore, write_bag

    store = typestore()
    cmds = [(k * 10**9, rcout_message(store, k * 10**9, [1500] * 8)) for k in range(1, 31)]
    write_bag(tmp_path / "long", {"/mavros/rc/out": ("mavros_msgs/msg/RCOut", cmds)})
    proc = subprocess.Popen(
        [BIN / "uvms-sim", "replay", str(tmp_path / "long"), "--live"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    time.sleep(4.0)
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=30)[0]
    assert proc.returncode == 130 and "Traceback" not in out, out
    assert "stopped at" in out and "s of the bag" in out


def test_the_readme_client_example_flies_the_vehicle():
    """The client in the README (rclpy and mavros_msgs only), run as written in its own process
    against a simulator: it sets ALT_HOLD, arms and streams a forward stick; the vehicle is
    armed in ALT_HOLD and moves forward (waited for up to 30 s of wall time: how fast is the
    benchmarks' business)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("A client needs nothing from this package:", 1)[1]
    code = block.split("```python", 1)[1].split("```", 1)[0]
    with simulator(description="bluerov2_heavy") as (sim, _user, executor):
        x0 = float(sim.sim.state.q[0])
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        ap = sim.vehicles[0].shim.autopilot

        def moved() -> float:  # NED north: the vehicle faces north at start
            return float(sim.sim.state.q[0]) - x0

        end = time.monotonic() + 30.0
        while time.monotonic() < end and proc.poll() is None and not (ap.armed and abs(moved()) > 0.3):
            executor.spin_once(timeout_sec=0.1)
        proc.kill()
        _, err = proc.communicate(timeout=10)
        assert proc.returncode == -signal.SIGKILL, err  # still running, as the example spins
        assert ap.armed and ap.mode == "ALT_HOLD"
        assert abs(moved()) > 0.3, moved()
