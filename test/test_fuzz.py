"""Malformed, huge and hostile input at the boundaries: thousands of cases per surface, seeded,
fast enough for every CI run (``FUZZ_SCALE=10 pytest test/test_fuzz.py`` runs ten times as
many). What must hold: no exception other than the documented one, nothing non-finite out.

Surfaces here: description files (``load`` / ``uvms-sim check``), the SITL JSON backend's UDP
port, the MAVLink HIL link. The node's topics and parameters are fuzzed in ``test_node.py``.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import socket
import struct
import zlib
from pathlib import Path

os.environ.setdefault("MAVLINK20", "1")  # before pymavlink chooses its dialect

import numpy as np
import pytest
import yaml
from net_helpers import free_udp_port
from pymavlink import mavutil

from uvms_sim.hil.mavlink_hil import MavlinkHil
from uvms_sim.hil.sitl_json import MAGIC_16, MAGIC_32, SitlJsonBackend, encode_servo_packet
from uvms_sim.model import ConfigError, load
from uvms_sim.model.yaml_source import read_yaml
from uvms_sim.simulator import Simulator

CONFIG = Path(__file__).resolve().parents[1] / "config"

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
NASTY = [None, True, -1, 0, 1e300, -1e300, float("nan"), float("inf"), "x", "", [], [1], [1, 2, 3], {},
         {"a": 1}, [[1, 2], [3]], 2**70, "1e999", [None] * 6, [float("nan")] * 3]  # fmt: skip


def _paths(node, prefix=()):
    """Every (path, value) of a nested YAML structure."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _mutate(doc, rng):
    doc = copy.deepcopy(doc)
    paths = [p for p, _ in _paths(doc) if p]
    for _ in range(1 if rng.random() < 0.7 else int(rng.integers(2, 4))):
        path = paths[int(rng.integers(len(paths)))]
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            last = path[-1]
            roll = rng.random()
            value = parent[last]
            if isinstance(value, int | float) and not isinstance(value, bool) and roll < 0.5:
                parent[last] = float(
                    float(value or 1.0) * 10.0 ** rng.uniform(-6, 6) * (-1.0 if rng.random() < 0.2 else 1.0)
                )
            elif roll < 0.15 and isinstance(parent, dict):
                del parent[last]
            elif roll < 0.25 and isinstance(parent, dict):
                parent[f"{last}_typo"] = parent.pop(last)
            else:
                parent[last] = copy.deepcopy(NASTY[int(rng.integers(len(NASTY)))])
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@pytest.mark.parametrize("config", ["bluerov2_heavy", "bluerov2_light_arm", "bluerov1_pair"])
def test_descriptions_either_load_and_run_or_say_what_is_wrong(tmp_path, config):
    """Mutated shipped descriptions (numbers scaled by up to 1e±6 and negated, values replaced
    by wrong types, NaN, 1e300, huge ints, keys deleted or misspelt): each one loads and steps,
    or raises ConfigError; never another exception, never a non-finite state after a step that
    did not raise."""
    base = json.loads(json.dumps(read_yaml(CONFIG / f"{config}.yaml")))  # YAML 1.2 numbers, plain types
    rng = np.random.default_rng(zlib.crc32(config.encode()))
    counts = {"loaded": 0, "refused": 0}
    for included in CONFIG.glob("*.yaml"):  # what a description includes sits beside it
        shutil.copy(included, tmp_path)
    path = tmp_path / f"fuzzed_{config}.yaml"
    for _ in range(300 * SCALE):
        path.write_text(yaml.safe_dump(_mutate(base, rng)))
        try:
            system = load(path)
        except ConfigError as exc:
            counts["refused"] += 1
            counts["last"] = str(exc)
            continue
        counts["loaded"] += 1
        sim = Simulator.from_system(system)
        try:
            sim.step(0.01)
        except ValueError:  # a documented refusal (NonFiniteStateError is one)
            continue
        assert np.all(np.isfinite(sim.state.q)) and np.all(np.isfinite(sim.state.v))
    assert counts["refused"] > 100 and counts["loaded"] > 10, counts


def test_hostile_yaml_files_are_config_errors(tmp_path):
    """Billion laughs, deep nesting, binary, unhashable keys, empty and huge files."""
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 10)}]\n" for k in range(8)
    ) + "vehicles: *i\n"  # fmt: skip
    cases = {
        "laughs.yaml": laughs,
        "deep.yaml": "a: " + "[" * 5000 + "]" * 5000,
        "binary.yaml": b"\xff\xfe\x00\x01" * 100,
        "keys.yaml": "{[1, 2]: 3}",
        "empty.yaml": "",
        "scalar.yaml": "42",
        "huge.yaml": "vehicles:\n" + "  - {name: v, links: []}\n" * 20000,
    }
    for name, text in cases.items():
        p = tmp_path / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        with pytest.raises(ConfigError):
            load(p)


def test_sitl_udp_survives_random_and_mutated_datagrams():
    """Random bytes, truncations, extensions and bit flips of valid servo packets, every
    frame count and rate: the backend answers only well-formed frames, never raises, and every
    answer is finite JSON text."""
    sim = Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml"))
    backend = SitlJsonBackend(sim, port=0)
    rng = np.random.default_rng(16)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    sender.settimeout(0.5)
    answered = 0
    try:
        for k in range(2000 * SCALE):
            kind = k % 5
            good = encode_servo_packet(int(rng.integers(1, 65536)), int(rng.integers(0, 2**32)),
                                       rng.integers(0, 65536, size=16).tolist())  # fmt: skip
            if kind == 0:
                data = rng.bytes(int(rng.integers(0, 300)))
            elif kind == 1:
                data = good[: int(rng.integers(0, len(good)))]
            elif kind == 2:
                data = good + rng.bytes(int(rng.integers(1, 40)))
            elif kind == 3:
                flip = bytearray(good)
                flip[int(rng.integers(len(flip)))] ^= 1 << int(rng.integers(8))
                data = bytes(flip)
            else:
                data = struct.pack("<HHI32H", MAGIC_32 if rng.random() < 0.5 else MAGIC_16, 400, k,
                                   *rng.integers(0, 65536, size=32).tolist())  # fmt: skip
            sender.sendto(data, ("127.0.0.1", backend.port))
            if backend.serve_once(0.5):
                reply = sender.recv(65535)
                answered += 1
                assert reply.startswith(b'\n{"timestamp":') and b"nan" not in reply and b"inf" not in reply
        assert np.all(np.isfinite(sim.state.q))
        assert answered > 100 and sum(backend.counters.dropped.values()) > 500
    finally:
        sender.close()
        backend.close()


def test_sitl_multi_survives_random_and_mutated_datagrams():
    """Two SITL instances' ports (the connected pair) fed random bytes, truncations, bit flips
    and well-formed frames with random counts and rates: the backend never raises, steps only
    when both well-formed frames are in, and every answer is finite JSON text."""
    from uvms_sim.hil.sitl_multi import SitlJsonMulti

    sim = Simulator.from_system(load(CONFIG / "bluerov1_pair.yaml"))
    backend = SitlJsonMulti(sim, port=0)
    rng = np.random.default_rng(42)
    senders = []
    for _ in backend.ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        senders.append(s)
    answered = 0
    try:
        for k in range(1000 * SCALE):
            for i, sender in enumerate(senders):
                good = encode_servo_packet(int(rng.integers(1, 65536)), int(rng.integers(0, 2**32)),
                                           rng.integers(0, 65536, size=16).tolist())  # fmt: skip
                kind = (k + i) % 4
                if kind == 0:
                    data = rng.bytes(int(rng.integers(0, 300)))
                elif kind == 1:
                    data = good[: int(rng.integers(0, len(good)))]
                elif kind == 2:
                    flip = bytearray(good)
                    flip[int(rng.integers(len(flip)))] ^= 1 << int(rng.integers(8))
                    data = bytes(flip)
                else:
                    data = good
                sender.sendto(data, ("127.0.0.1", backend.ports[i]))
            backend.serve_once(0.01)
            for sender in senders:
                try:
                    while True:
                        reply = sender.recv(65535)
                        answered += 1
                        assert reply.startswith(b'\n{"timestamp":')
                        assert b"nan" not in reply and b"inf" not in reply
                except BlockingIOError:
                    pass
        assert np.all(np.isfinite(sim.state.q))
        assert answered > 50 and sum(backend.counters.dropped.values()) > 500
    finally:
        for sender in senders:
            sender.close()
        backend.close()


def test_mavlink_hil_survives_random_bytes_and_random_messages():
    """Random bytes and well-formed actuator messages with random fields (NaN, huge, negative
    PWM) on the HIL link: the bridge keeps stepping, the state stays finite, the PWM stays in
    range."""
    port = free_udp_port()
    bridge = MavlinkHil(
        Simulator.from_system(load(CONFIG / "bluerov2_heavy.yaml")), f"udpin:127.0.0.1:{port}"
    )
    board = mavutil.mavlink_connection(f"udpout:127.0.0.1:{port}", source_system=1, source_component=1)
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = np.random.default_rng(18)
    specials = [float("nan"), float("inf"), -1e30, 1e30, 0.0, 1.0, -1.0, 7.5]
    try:
        for k in range(600 * SCALE):
            if k % 3 == 0:
                raw.sendto(rng.bytes(int(rng.integers(1, 280))), ("127.0.0.1", port))
            elif k % 3 == 1:
                controls = [specials[int(i)] for i in rng.integers(len(specials), size=16)]
                stamp, mode, flags = (
                    int(rng.integers(0, 2**63)),
                    int(rng.integers(0, 256)),
                    int(rng.integers(0, 2**63)),
                )
                board.mav.hil_actuator_controls_send(stamp, controls, mode, flags)
            else:
                board.mav.servo_output_raw_send(int(rng.integers(0, 2**32)), int(rng.integers(0, 256)),
                                                *rng.integers(0, 65536, size=16).tolist())  # fmt: skip
            bridge.step(0.004)
        pwm = bridge.sim.thrusters.pwm
        assert np.all(np.isfinite(bridge.sim.state.q)) and np.all((pwm >= 1100) & (pwm <= 1900))
        assert bridge.dropped > 10
    finally:
        raw.close()
        board.close()
        bridge.close()


def _random_float(rng):
    return [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 0.0, 1e6, -1e6,
            float(rng.normal() * 10)][int(rng.integers(9))]  # fmt: skip


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
# absurd wrenches overflow the physics on purpose
@pytest.mark.filterwarnings(
    "ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning"
)
def test_node_topics_services_and_parameters_survive_hostile_input():
    """Thousands of hostile messages on every input topic of the node and its MAVROS interface
    (NaN, inf, 1e308, wrong lengths, unknown names, random channel values, random mode
    strings), its services called at random, and its parameters set to random types and
    values: the physics thread stays alive, every published odometry and pressure is finite,
    bad parameters are refused with a reason."""
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from mavros_msgs.msg import ManualControl, OverrideRCIn
    from mavros_msgs.srv import CommandBool, SetMode
    from nav_msgs.msg import Odometry
    from rclpy.parameter import Parameter
    from ros_helpers import simulator, spin_until
    from sensor_msgs.msg import FluidPressure, JointState
    from std_msgs.msg import UInt16MultiArray
    from std_srvs.srv import SetBool, Trigger

    from uvms_sim.ros.parameters import PARAMETERS

    rng = np.random.default_rng(23)
    with simulator(description="bluerov2_light_arm", real_time_factor=0.0) as (sim, user, executor):
        odoms, pressures = [], []
        user.create_subscription(Odometry, "odom", odoms.append, 50)
        user.create_subscription(FluidPressure, "pressure", pressures.append, 50)
        pubs = {
            "wrench": user.create_publisher(WrenchStamped, "cmd_wrench", 50),
            "pose": user.create_publisher(PoseStamped, "set_pose", 50),
            "joints": user.create_publisher(JointState, "joint_commands", 50),
            "pwm": user.create_publisher(UInt16MultiArray, "thrusters/pwm", 50),
            "rc": user.create_publisher(OverrideRCIn, "mavros/rc/override", 50),
            "manual": user.create_publisher(ManualControl, "mavros/manual_control/send", 50),
        }
        clients = {
            "reset": user.create_client(Trigger, "reset"),
            "step": user.create_client(Trigger, "step"),
            "pause": user.create_client(SetBool, "pause"),
            "arm": user.create_client(CommandBool, "mavros/cmd/arming"),
            "mode": user.create_client(SetMode, "mavros/set_mode"),
        }
        assert spin_until(executor, lambda: odoms and all(p.get_subscription_count() for p in pubs.values()))
        names = ["arm_joint1", "arm_joint2", "nope", "", "arm_joint4"]
        sent = 0
        for k in range(1500 * SCALE):
            kind = list(pubs)[k % len(pubs)]
            if kind == "wrench":
                m = WrenchStamped()
                m.wrench.force.x, m.wrench.torque.z = _random_float(rng), _random_float(rng)
            elif kind == "pose":
                m = PoseStamped()
                m.pose.position.z = _random_float(rng)
                m.pose.orientation.w, m.pose.orientation.x = _random_float(rng), _random_float(rng)
            elif kind == "joints":
                n = int(rng.integers(0, 4))
                m = JointState(name=[names[int(i)] for i in rng.integers(len(names), size=n)])
                setattr(m, ["effort", "position", "velocity"][k % 3],
                        [_random_float(rng) for _ in range(int(rng.integers(0, 4)))])  # fmt: skip
            elif kind == "pwm":
                m = UInt16MultiArray(data=rng.integers(0, 65536, size=int(rng.integers(0, 20))).tolist())
            elif kind == "rc":
                m = OverrideRCIn(channels=rng.integers(0, 65536, size=18).tolist())
            else:
                m = ManualControl(x=_random_float(rng), y=_random_float(rng), z=_random_float(rng),
                                  r=_random_float(rng), buttons=int(rng.integers(0, 65536)))  # fmt: skip
            pubs[kind].publish(m)
            sent += 1
            if k % 50 == 0:
                which = list(clients)[(k // 50) % len(clients)]
                if which in ("reset", "step"):
                    clients[which].call_async(Trigger.Request())
                elif which == "pause":
                    clients[which].call_async(SetBool.Request(data=bool(rng.integers(2))))
                elif which == "arm":
                    clients[which].call_async(CommandBool.Request(value=bool(rng.integers(2))))
                else:
                    mode = ["MANUAL", "ALT_HOLD", "stabilize", "2", "19", "", "x" * 300, "\u00e9"][
                        int(rng.integers(8))
                    ]
                    clients[which].call_async(SetMode.Request(custom_mode=mode))
                executor.spin_once(timeout_sec=0.01)
        value_pool = [0, -1, 1e9, float("nan"), "fast", True, [1.0], 500, 500.0, 12.0, 16, 25.0, None]
        names = [*PARAMETERS, "use_sim_time", "no_such_parameter"]
        refused = 0
        for _ in range(1000 * SCALE):
            name, value = names[int(rng.integers(len(names)))], value_pool[int(rng.integers(len(value_pool)))]
            try:
                result = sim.set_parameters([Parameter(name, value=value)])[0]
            except Exception:  # rclpy itself refuses undeclared names and some types
                refused += 1
                continue
            refused += not result.successful
        clients["pause"].call_async(SetBool.Request(data=False))
        n0 = len(odoms)
        assert spin_until(executor, lambda: len(odoms) > n0 + 10, timeout=20)
        assert sim.thread.is_alive() and sent >= 1500 and refused >= 500
        assert np.all(np.isnan(sim.sim.thrusters.voltage))  # fixed preset: battery_voltage refused
        for o in odoms:
            p = o.pose.pose.position
            assert np.all(np.isfinite([p.x, p.y, p.z, o.twist.twist.linear.x]))
        assert all(np.isfinite(p.fluid_pressure) for p in pressures)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_random_bags_are_read_or_refused_and_replay_finitely(tmp_path):
    """Bags of random topics (thruster commands, odometry, poses, RC override, autopilot
    state, joint commands, and a type the replay does not know) holding valid messages with
    hostile values or random bytes, at random stamps: ``read_bag`` returns or raises
    ``BagError``, and what it returns replays to finite states."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from uvms_sim.replay.bag import BagError, odometry_message, rcout_message, read_bag, typestore
    from uvms_sim.replay.run import replay

    store = typestore()
    system = load(CONFIG / "bluerov2_heavy.yaml")
    rng = np.random.default_rng(24)
    kinds = {
        "/rc/out": "mavros_msgs/msg/RCOut",
        "/odom": "nav_msgs/msg/Odometry",
        "/junk": "std_msgs/msg/String",
    }
    outcome = {"read": 0, "refused": 0}
    for b in range(60 * SCALE):
        path = tmp_path / f"bag{b}"
        with Writer(path, version=9, storage_plugin=StoragePlugin.SQLITE3) as w:
            for topic, kind in kinds.items():
                if rng.random() < 0.2:
                    continue
                conn = w.add_connection(topic, kind, typestore=store)
                t = 1_700_000_000_000_000_000
                for _ in range(int(rng.integers(1, 30))):
                    t += int(rng.choice([0, 10**7, 10**8, 10**9, 3600 * 10**9, -(10**8)]))
                    stamp = max(1, t if rng.random() > 0.05 else int(rng.integers(1, 10**9)))
                    if rng.random() < 0.15:
                        data = rng.bytes(int(rng.integers(0, 200)))
                    elif kind.endswith("RCOut"):
                        data = store.serialize_cdr(
                            rcout_message(
                                store, stamp, rng.integers(0, 65536, size=int(rng.integers(0, 20)))
                            ),
                            kind,
                        )
                    elif kind.endswith("Odometry"):
                        row = [
                            _random_float(rng) if rng.random() < 0.2 else float(rng.normal())
                            for _ in range(13)
                        ]
                        data = store.serialize_cdr(odometry_message(store, stamp, row), kind)
                    else:
                        data = store.serialize_cdr(
                            store.types[kind](data="x" * int(rng.integers(0, 50))), kind
                        )
                    w.write(conn, stamp, data)
        try:
            bag = read_bag(path)
        except BagError:
            outcome["refused"] += 1
            continue
        outcome["read"] += 1
        try:
            t, rows = replay(system, bag, dt=0.05)
        except ValueError:  # e.g. a state the recorded commands drive to infinity: said, not hidden
            continue
        assert np.all(np.isfinite(rows)), b
    assert outcome["read"] > 10 and outcome["refused"] > 5, outcome


def test_command_line_options_are_checked(tmp_path, capsys):
    """Random option values for the subcommands that return (check, convert, replay, and the
    option checks of sitl and hil): exit status 0 or 2, or argparse's SystemExit(2); never
    another exception."""
    from uvms_sim.cli import main

    rng = np.random.default_rng(25)
    junk = ["", "-1", "0", "nan", "1e999", "99999", "x" * 500, "../../etc/passwd", "\u00e9", "--", "-",
            "u,v,x", "udpin:[::1]:1", str(tmp_path), str(tmp_path / "none.yaml"), "bluerov2"]  # fmt: skip
    shapes = [
        lambda a, b: ["check", a],
        lambda a, b: ["convert", a, str(tmp_path / "out.yaml")],
        lambda a, b: ["replay", a, "--config", b],
        lambda a, b: ["replay", str(tmp_path / "none"), "--config", "bluerov2", "--dt", a, "--axes", b],
        lambda a, b: [
            "replay",
            str(tmp_path / "a.BIN"),
            str(tmp_path / "b.tlog"),
            "--window",
            a,
            "--impose",
            b,
        ],
        lambda a, b: ["replay", str(tmp_path / "none.csv.gz"), "--reversed-motors", a, "--bound", b],
        lambda a, b: ["replay", str(tmp_path / "none"), "--fit", a, "--bootstrap", b],
        lambda a, b: ["replay", str(tmp_path / "none"), "--voltage", a, "--config", b],
        lambda a, b: ["sitl", "--port", a],
        lambda a, b: ["sitl", "--bind", a, "--port", "-5"],
        lambda a, b: ["hil", "--rate", a, "--connection", b],
        lambda a, b: ["models", a],
    ]
    codes = {0: 0, 2: 0}
    for k in range(1000 * SCALE):
        a, b = (junk[int(i)] for i in rng.integers(len(junk), size=2))
        argv = shapes[k % len(shapes)](a, b)
        if argv[0] == "hil" and not a.startswith("-") and a not in ("nan", "1e999", "0", "", "x" * 500):
            continue  # a valid rate would start the bridge's loop
        if argv[:2] == ["sitl", "--port"] and a.isdigit() and int(a) <= 65535:
            continue  # a valid port would start serving
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        assert code in codes, (argv, code)
        codes[code] += 1
        capsys.readouterr()
    assert codes[2] > 400, codes


@pytest.mark.ros
def test_echo_and_record_take_hostile_topic_names(tmp_path, capsys):
    """``uvms-sim echo`` and ``record`` with topic names ROS refuses (empty, spaces, repeated
    slashes, control characters, 10 000 characters, shell and path tricks): a one-line error and
    exit 2, and no bag directory left behind; accepted names that nobody publishes end in exit 1
    (echo) or an empty bag (record)."""
    from uvms_sim.cli import main

    rng = np.random.default_rng(31)
    names = ["", " ", "a b", "//x", "/odom?", "\x00", "\n", "x" * 10_000, "$(rm -rf /)", "../../etc",
             "~", "~/ok", "{node}", "/" + "a/" * 200 + "b", "é", "/odom", "odom_" + "9" * 50]  # fmt: skip
    names += [
        "".join(chr(int(c)) for c in rng.integers(32, 127, size=int(rng.integers(1, 30))))
        for _ in range(12 * SCALE)
    ]
    for k, name in enumerate(names):
        code = main(["echo", name, "--timeout", "0"])
        out = capsys.readouterr()
        assert code in (1, 2), (name, code)
        assert "Traceback" not in out.err and len(out.err.splitlines()) == 1, (name, out.err)
        bag = tmp_path / f"bag{k}"
        code = main(["record", str(bag), name, "--duration", "0.01"])
        out = capsys.readouterr()
        assert code in (0, 2), (name, code)
        assert bag.exists() == (code == 0), name
        assert "Traceback" not in out.err + out.out


def test_start_parameters_refuse_hostile_values():
    """The world-frame and frame-id parameters: a wrong type, length or a non-finite or absurd
    number is a ValueError naming the parameter (the node turns it into a one-line error)."""
    from uvms_sim.ros.parameters import check_parameter

    for bad in ("1,2,3", [1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [float("nan"), 0.0, 0.0], [1e9, 0.0, 0.0],
                [True, 0.0, 0.0], ["a", 0.0, 0.0], 5.0, None):  # fmt: skip
        with pytest.raises(ValueError, match="world_offset"):
            check_parameter("world_offset", bad)
    assert check_parameter("world_offset", [1, 2.5, -3]) == [1.0, 2.5, -3.0]
    for name in ("world_frame", "local_position_frame_id", "local_position_child_frame_id"):
        with pytest.raises(ValueError, match=name):
            check_parameter(name, 3)


def test_hostile_csv_runs_are_refused_in_one_line(tmp_path):
    """CSV runs (the tank-run form) with missing columns, text in numbers, NaN, a time column
    that runs back, a zero quaternion, no rows, random bytes or a broken gzip: a BagError naming
    the file, one line, never a traceback."""
    import gzip

    from uvms_sim.replay.bag import BagError
    from uvms_sim.replay.sources import read_csv_run

    head = "t,x,y,z,qw,qx,qy,qz,u,v,w,p,q,r,pwm1,pwm2"
    good = "0,0,0,-1,1,0,0,0,0,0,0,0,0,0,1500,1500"
    cases = {
        "columns.csv": "x,y,z\n1,2,3\n",
        "text.csv": f"{head}\n{good.replace('1500', 'abc', 1)}\n",
        "nan.csv": f"{head}\n{good.replace('-1', 'nan')}\n",
        "back.csv": f"{head}\n{good}\n{good}\n",
        "quat.csv": f"{head}\n{good.replace(',1,0,0,0,', ',0,0,0,0,')}\n",
        "empty.csv": f"{head}\n",
        "nothing.csv": "",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "random.csv").write_bytes(np.random.default_rng(3).bytes(5000))
    (tmp_path / "broken.csv.gz").write_bytes(gzip.compress(f"{head}\n{good}\n".encode())[:30])
    for path in sorted(tmp_path.iterdir()):
        with pytest.raises(BagError) as err:
            read_csv_run(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value), (path, err.value)


def test_rc_overrides_keep_the_emulated_mount_and_lights_in_range():
    """Random RC overrides (every channel, values from MAVLink's whole uint16 range, floats,
    non-finite ones refused): the emulated ArduSub's mount angle stays finite within its
    limits and its servo outputs are PWMs (SERVO9 0 or 1100-1900, SERVO10 1100-1900)."""
    from uvms_sim.actuators.ardusub import ArduSubEmulator, VehicleState

    rng = np.random.default_rng(40)
    ap = ArduSubEmulator("vectored", mount_limits=(-0.7, 0.5))
    state = VehicleState(0.0, 0.0, 0.0, np.zeros(3), 1.0, 0.0)
    for _ in range(2000 * SCALE):
        n = int(rng.integers(0, 20))
        kind = rng.integers(0, 3)
        if kind == 0:
            channels = rng.integers(0, 65536, size=n).astype(float)
        elif kind == 1:
            channels = rng.choice([0.0, 1100.0, 1500.0, 1900.0, 65534.0, 65535.0], size=n)
        else:
            channels = np.array([_random_float(rng) for _ in range(n)])
        try:
            ap.set_rc(channels)
        except ValueError:
            assert not np.all(np.isfinite(channels))
        ap.update(state, float(rng.uniform(0.0, 0.1)))
        assert -0.7 <= ap.mount_tilt <= 0.5
        pwm = ap.servo_outputs(ap.update(state, 0.005))
        assert pwm[8] == 0 or 1100 <= pwm[8] <= 1900
        assert 1100 <= pwm[9] <= 1900
