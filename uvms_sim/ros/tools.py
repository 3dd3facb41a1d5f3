"""``uvms-sim echo`` and ``uvms-sim record``: what ``ros2 topic echo`` and ``ros2 bag record``
give a ROS user, for a machine with only the PyPI wheels.

Both find a topic's type in the ROS graph and subscribe with a QoS that matches its
publishers (best effort if any publisher is, transient local if all are, as
``ros2 topic echo`` adapts). ``record`` writes a rosbag2 directory (sqlite3 or mcap) through
the rosbags library, one connection per topic, the serialized CDR messages as received
(``raw=True``: nothing is decoded), stamped with the receive time (wall clock, or /clock with
``--use-sim-time``); ``ros2 bag info/play`` and ``uvms-sim replay`` read it.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

MAX_TOPICS = 1000  # a graph with more topics than this is not recorded whole


def message_class(type_name: str):
    """The Python class of ``pkg/msg/Name``; None when that package is not importable."""
    parts = type_name.split("/")
    if len(parts) != 3 or not all(p.isidentifier() for p in parts):
        return None
    try:
        return getattr(importlib.import_module(f"{parts[0]}.{parts[1]}"), parts[2])
    except (ImportError, AttributeError):
        return None


def matching_qos(node: Node, topic: str) -> QoSProfile:
    """A subscription QoS that receives from every current publisher of ``topic``."""
    infos = node.get_publishers_info_by_topic(topic)
    qos = QoSProfile(depth=100)
    if any(i.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT for i in infos):
        qos.reliability = ReliabilityPolicy.BEST_EFFORT
    if infos and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos):
        qos.durability = DurabilityPolicy.TRANSIENT_LOCAL
    return qos


def wait_for_type(node: Node, topic: str, timeout: float) -> str | None:
    """The type of ``topic`` once a publisher announces it (None after ``timeout`` s)."""
    end = time.monotonic() + timeout
    while True:
        types = dict(node.get_topic_names_and_types())
        if topic in types:
            return types[topic][0]
        if time.monotonic() > end:
            return None
        time.sleep(0.1)


def to_plain(msg, depth: int = 0):
    """A message as plain dicts/lists/numbers (for printing)."""
    if depth > 32:
        return "..."
    if hasattr(msg, "get_fields_and_field_types"):
        return {f: to_plain(getattr(msg, f), depth + 1) for f in msg.get_fields_and_field_types()}
    if isinstance(msg, list | tuple) or type(msg).__name__ in ("ndarray", "array"):
        return [to_plain(x, depth + 1) for x in msg]
    if hasattr(msg, "item") and not isinstance(msg, str | bytes):  # a numpy scalar
        return msg.item()
    return msg


class TopicNameError(ValueError):
    """A topic name ROS does not accept."""


def _absolute(node: Node, topic: str) -> str:
    """The fully qualified name of ``topic``; TopicNameError saying why ROS refuses it."""
    try:
        return node.resolve_topic_name(topic)
    except Exception as exc:  # rclpy raises its RCLError (a RuntimeError) or ValueError
        reason = str(exc).split(", at ")[0]
        raise TopicNameError(f"{topic[:80]!r} is not a valid topic name ({reason})") from None


def echo(topic: str, count: int = 0, timeout: float = 10.0, out=sys.stdout) -> int:
    """Print messages of ``topic`` (``count`` of them; 0: until Ctrl-C). 0 on success, 1 when
    the topic never appears or no message arrives within ``timeout`` s."""
    import yaml

    rclpy.init()
    node = rclpy.create_node("uvms_sim_echo")
    try:
        try:
            name = _absolute(node, topic)
        except TopicNameError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        type_name = wait_for_type(node, name, timeout)
        if type_name is None:
            print(f"error: no publisher of {name} within {timeout:g} s", file=sys.stderr)
            return 1
        cls = message_class(type_name)
        if cls is None:
            print(f"error: {name} is {type_name}, which is not importable here", file=sys.stderr)
            return 1
        got = [0]

        def show(msg) -> None:
            got[0] += 1
            out.write(yaml.safe_dump(to_plain(msg), sort_keys=False, default_flow_style=None) + "---\n")
            out.flush()

        node.create_subscription(cls, name, show, matching_qos(node, name))
        end = time.monotonic() + timeout
        while rclpy.ok() and (count == 0 or got[0] < count):
            rclpy.spin_once(node, timeout_sec=0.1)
            if got[0] == 0 and time.monotonic() > end:
                print(f"error: no message on {name} within {timeout:g} s", file=sys.stderr)
                return 1
        return 0
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def record(
    output: str,
    topics: list[str],
    duration: float = 0.0,
    storage: str = "sqlite3",
    use_sim_time: bool = False,
    out=sys.stdout,
) -> int:
    """Record ``topics`` (all the graph's when empty, new ones as they appear) into a new
    rosbag2 directory ``output`` for ``duration`` s (0: until Ctrl-C). Returns 0, or 2 when
    ``output`` exists."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys.store import TypesysError

    from ..replay.bag import typestore

    path = Path(output)
    if path.exists():
        print(f"error: {output} exists: a bag is written into a new directory", file=sys.stderr)
        return 2
    store = typestore()
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    rclpy.init()
    node = rclpy.create_node("uvms_sim_record")
    if use_sim_time:
        node.set_parameters([rclpy.parameter.Parameter("use_sim_time", value=True)])
    counts: dict[str, int] = {}
    skipped: dict[str, str] = {}
    try:
        wanted = {_absolute(node, t) for t in topics}
    except TopicNameError as exc:  # before a bag is created
        print(f"error: {exc}", file=sys.stderr)
        node.destroy_node()
        rclpy.try_shutdown()
        return 2
    writer = Writer(path, version=9, storage_plugin=plugin)
    writer.open()
    try:

        def subscribe_new() -> None:
            for name, types in node.get_topic_names_and_types():
                if name in counts or name in skipped or (wanted and name not in wanted):
                    continue
                if len(counts) >= MAX_TOPICS:
                    skipped[name] = f"more than {MAX_TOPICS} topics"
                    continue
                cls = message_class(types[0])
                if cls is None:
                    skipped[name] = f"{types[0]} not importable"
                    continue
                try:
                    conn = writer.add_connection(name, types[0], typestore=store)
                except (TypesysError, KeyError, ValueError) as exc:
                    skipped[name] = f"{types[0]} unknown to rosbags ({exc})"
                    continue

                def write(data: bytes, conn=conn, name=name) -> None:
                    writer.write(conn, node.get_clock().now().nanoseconds, data)
                    counts[name] += 1

                counts[name] = 0
                node.create_subscription(cls, name, write, matching_qos(node, name), raw=True)
                print(f"recording {name} ({types[0]})", file=out, flush=True)

        start = time.monotonic()
        scan = -1.0
        while rclpy.ok() and (duration <= 0 or time.monotonic() - start < duration):
            if time.monotonic() - scan > 1.0:
                subscribe_new()
                scan = time.monotonic()
            rclpy.spin_once(node, timeout_sec=0.05)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        writer.close()
        node.destroy_node()
        rclpy.try_shutdown()
    for name, reason in sorted(skipped.items()):
        print(f"  not recorded: {name}: {reason}", file=out)
    for name in sorted(wanted - set(counts)):
        print(f"  not recorded: {name}: no publisher seen", file=out)
    total = sum(counts.values())
    print(f"wrote {output}: {total} messages on {len(counts)} topics", file=out)
    return 0
