"""The simulator node's entity services (``ros.entities``: the standard simulation interfaces)
under hostile requests over real DDS: 600 * ``FUZZ_SCALE`` requests spread over every service
(NaN, infinite, huge and zero-quaternion poses and twists, unknown frames, YAML that is huge,
an alias bomb, deeply nested, of the wrong types or not YAML at all, uris of devices, folders,
other schemes and missing files, names with slashes, spaces, unicode or thousands of
characters, invalid namespaces, regular expressions that are not ones, tags, bounds and
categories), then 1000 * ``FUZZ_SCALE`` spawns in a row while paused, until the cap on objects,
and the simulation run with them. What must hold: every request is answered with a code of its
interface (a refusal says why); the node keeps stepping; every transform, odometry and entity
state it publishes stays finite; it never holds more than ``MAX_OBJECTS`` objects."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from ros_helpers import simulator, spin_until
from simulation_interfaces.msg import Bounds, EntityCategory, EntityFilters, EntityState, Result, TagsFilter
from test_node_entities import ask, pose, scene_description, services
from tf2_msgs.msg import TFMessage

from uvms_sim.ros.entities import MAX_OBJECTS

pytestmark = pytest.mark.ros
SCALE = int(os.environ.get("FUZZ_SCALE", "1"))

NUMBERS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e-300,
    1e300,
    -1e300,
    math.nan,
    math.inf,
    -math.inf,
    1e5,
    1e5 + 1,
    3.0,
    -9.5,
]
NAMES = ["", "ball", "rov", "a/b", "/abs", "with space", "ünïcode", "x" * 5000, "0lead", "_ok", "ok_1",
         "..", "*", "rov/base_link", "\t", "a" * 64, "a" * 65]  # fmt: skip
BOMB = (
    'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "shape: sphere\n"
)  # a billion laughs: 9**9 values
RESOURCES = [
    "{shape: sphere, size: [0.05], mass: 2.0}",
    "{shape: box, size: [0.2, 0.1, 0.1], density: 2600.0}",
    "{shape: cylinder, size: [0.04, 0.2], mass: 1.0, color: [1, 0, 0, 1]}",
    "{shape: sphere, size: [0.05], mass: 2.0, xyz: [0, 0, 1], rpy: [0, 0, 1]}",  # replaced by the pose
    "{shape: sphere, size: [1e-9], mass: 1e-9}", "{shape: sphere, size: [5000.0], mass: 1.0}",
    "{shape: sphere, size: [.nan], mass: 1.0}", "{shape: sphere, size: [0.1], mass: .inf}",
    "{shape: sphere, size: [0.1], mass: -1}", "{shape: sphere, size: [0.1]}",
    "{shape: sphere, size: [0.1], mass: 1, density: 1}", "{shape: teapot, size: [0.1], mass: 1}",
    "{shape: sphere, size: abc, mass: 1}", "{shape: sphere, size: [0.1, 0.2, 0.3, 0.4], mass: 1}",
    "{shape: box, size: [0.1], mass: 1}", "{shape: sphere, size: [0.1], mass: [1]}",
    "{shape: sphere, size: [0.1], mass: 1, unknown: 3}", "{shape: sphere, size: [0.1], mass: 1, name: [a]}",
    "{shape: mesh, file: /dev/zero, mass: 1}", "{shape: mesh, file: /etc/passwd, mass: 1}",
    "{shape: mesh, file: /, mass: 1}", "{shape: mesh, file: missing.stl, mass: 1}",
    "{shape: sphere, size: [0.1], mass: 1, hydrodynamics: {volume: -1}}",
    "{shape: sphere, size: [0.1], mass: 1, hydrodynamics: 7}", "{shape: sphere, size: [0.1], mass: 1e7}",
    "[1, 2, 3]", "just text", "42", "~", "{", "a: b: c", ": :", "\x00\x01", "\ud7ff" * 10, "- - - -",
    "[" * 5000 + "]" * 5000, "{a: " * 3000 + "1" + "}" * 3000, BOMB, "x: " + "y" * (70 * 1024),
    "{shape: sphere, size: [0.05], mass: 2.0, description: " + "d" * 60_000 + "}",
    "!!python/object/apply:os.system ['true']", "{shape: !!binary aGVsbG8=, size: [0.1], mass: 1}",
    "{shape: sphere, size: [0.05], mass: 2.0, <<: {mass: 3}}",
    "{shape: sphere, shape: box, size: [1], mass: 1}",
]  # fmt: skip
URIS = ["", "/dev/zero", "/dev/zero.yaml", "/etc/passwd", "/proc/self/mem", "/", "/tmp", "http://x/y.yaml",
        "file:///dev/null", "model://ball", "package://uvms_sim/x.yaml", "file://%00.yaml", "\x00",
        "relative/none.yaml", "file:///proc/self/environ", "x" * 10_000 + ".yaml"]  # fmt: skip
FRAMES = ["", "odom", "map", "odom_ned", "base_link", "nowhere", "/odom", "x" * 1000]


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _number(rng) -> float:
    return float(_pick(rng, NUMBERS)) if rng.random() < 0.5 else float(rng.uniform(-12.0, 12.0))


def _pose(rng):
    p = pose(float(rng.uniform(-8, 8)), float(rng.uniform(-8, 8)), float(rng.uniform(-9.8, -1.0)))
    p.header.frame_id = _pick(rng, FRAMES) if rng.random() < 0.3 else "odom"
    if rng.random() < 0.5:
        target = _pick(rng, ["x", "y", "z", "qw", "qx", "qy", "qz"])
        value = _number(rng)
        if target.startswith("q"):
            setattr(p.pose.orientation, target[1], value)
        else:
            setattr(p.pose.position, target, value)
    if rng.random() < 0.1:
        p.pose.orientation.w = 0.0
    return p


def _name(rng, known: list[str]) -> str:
    return _pick(rng, known) if known and rng.random() < 0.5 else _pick(rng, NAMES)


def _filters(rng) -> EntityFilters:
    f = EntityFilters()
    f.filter = _pick(rng, ["", "b", "^rov$", "(", "[", "a{99999999999}", "(a+)+$", "\\", "x" * 2000, ".*"])
    if rng.random() < 0.3:
        f.categories = [
            EntityCategory(category=int(rng.integers(0, 256))) for _ in range(int(rng.integers(1, 4)))
        ]
    if rng.random() < 0.1:
        f.tags = TagsFilter(tags=["a"], filter_mode=int(rng.integers(0, 256)))
    if rng.random() < 0.1:
        f.bounds = Bounds(type=int(rng.integers(0, 256)))
    return f


def _state(rng) -> EntityState:
    s = EntityState()
    p = _pose(rng)
    s.header.frame_id, s.pose = p.header.frame_id, p.pose
    for part in (s.twist.linear, s.twist.angular, s.acceleration.linear, s.acceleration.angular):
        if rng.random() < 0.3:
            part.x, part.y, part.z = _number(rng), _number(rng), _number(rng)
    return s


SPAWN_CODES = {Result.RESULT_OK, Result.RESULT_NOT_FOUND, Result.RESULT_OPERATION_FAILED, *range(101, 110)}
CODES = {
    "spawn_entity": SPAWN_CODES,
    "delete_entity": {Result.RESULT_OK, Result.RESULT_NOT_FOUND, Result.RESULT_OPERATION_FAILED},
    "set_entity_state": {Result.RESULT_OK, Result.RESULT_NOT_FOUND, 101},
    "get_entity_state": {Result.RESULT_OK, Result.RESULT_NOT_FOUND},
    "get_entity_info": {Result.RESULT_OK, Result.RESULT_NOT_FOUND},
    "get_entities": {Result.RESULT_OK, Result.RESULT_FEATURE_UNSUPPORTED, Result.RESULT_OPERATION_FAILED},
    "get_entities_states": {
        Result.RESULT_OK,
        Result.RESULT_FEATURE_UNSUPPORTED,
        Result.RESULT_OPERATION_FAILED,
    },
}


def _request(rng, service: str, known: list[str]) -> dict:
    if service == "spawn_entity" and rng.random() < 0.4:  # a good one, somewhere free or not
        place = pose(float(rng.uniform(-8, 8)), float(rng.uniform(-8, 8)), float(rng.uniform(-9.5, -1.0)))
        return {"name": f"good_{len(known)}_{int(rng.integers(1000))}", "initial_pose": place,
                "resource_string": _pick(rng, RESOURCES[:4])}  # fmt: skip
    if service == "spawn_entity":
        out = {
            "name": _name(rng, known),
            "allow_renaming": bool(rng.random() < 0.3),
            "initial_pose": _pose(rng),
        }
        if rng.random() < 0.8:
            out["resource_string"] = _pick(rng, RESOURCES)
        if rng.random() < 0.2:
            out["uri"] = _pick(rng, URIS)
        if rng.random() < 0.1:
            out["entity_namespace"] = _pick(rng, ["", "ns", "/ns", "bad ns", "//", "a/b/", "1x", "ns" * 200])
        return out
    if service == "set_entity_state":
        return {"entity": _name(rng, known), "state": _state(rng)}
    if service in ("get_entities", "get_entities_states"):
        return {"filters": _filters(rng)}
    return {"entity": _name(rng, known)}


def _finite_states(executor, clients) -> list[str]:
    reply = ask(executor, clients, "get_entities_states")
    assert reply.result.result == Result.RESULT_OK
    for s in reply.states:
        p, o, v, w = s.pose.position, s.pose.orientation, s.twist.linear, s.twist.angular
        assert np.all(np.isfinite([p.x, p.y, p.z, o.w, o.x, o.y, o.z, v.x, v.y, v.z, w.x, w.y, w.z]))
    return list(reply.entities)


def test_hostile_entity_requests_are_answered_and_leave_the_state_finite(tmp_path):
    rng = np.random.default_rng(38)
    with simulator(description=scene_description(tmp_path), real_time_factor=4.0) as (sim, user, executor):
        bad: list[str] = []

        def check_tf(msg: TFMessage) -> None:
            for t in msg.transforms:
                x, r = t.transform.translation, t.transform.rotation
                if not np.all(np.isfinite([x.x, x.y, x.z, r.w, r.x, r.y, r.z])):
                    bad.append(t.child_frame_id)

        def check_odom(msg: Odometry) -> None:
            p = msg.pose.pose.position
            if not np.all(np.isfinite([p.x, p.y, p.z])):
                bad.append("odom")

        user.create_subscription(TFMessage, "/tf", check_tf, 100)
        user.create_subscription(Odometry, "odom", check_odom, 10)
        clients = services(user)
        known = ["rov", "ball"]
        counts: dict[str, dict[int, int]] = {name: {} for name in CODES}
        for _ in range(600 * SCALE):
            service = _pick(rng, list(CODES))
            reply = ask(executor, clients, service, **_request(rng, service, known))
            code = reply.result.result
            assert code in CODES[service], (service, code, reply.result.error_message)
            assert code == Result.RESULT_OK or reply.result.error_message
            assert "internal error" not in reply.result.error_message, (service, reply.result.error_message)
            counts[service][code] = counts[service].get(code, 0) + 1
            if service == "spawn_entity" and code == Result.RESULT_OK:
                known.append(reply.entity_name)
        features = ask(executor, clients, "get_simulator_features")
        assert len(features.features.features) > 0
        assert sim.thread.is_alive() and sim.failed is None
        assert counts["spawn_entity"].get(Result.RESULT_OK, 0) > 5 * SCALE, counts

        # a flood of spawns, paused (the loop steps no body meanwhile): up to the cap, then refused
        assert ask(executor, clients, "pause", data=True).success
        spawned = refused = 0
        for k in range(1000 * SCALE):
            x, y = divmod(k % 400, 20)
            place = pose(x - 10.0, y - 10.0, -9.0)
            reply = ask(executor, clients, "spawn_entity", name=f"flood_{k}",
                        resource_string=_pick(rng, RESOURCES[:3]), initial_pose=place)  # fmt: skip
            code = reply.result.result
            assert code in SPAWN_CODES, (code, reply.result.error_message)
            spawned += code == Result.RESULT_OK
            refused += code != Result.RESULT_OK
        objects = len(sim.object_frames)
        assert objects == MAX_OBJECTS, (objects, spawned, refused)
        assert len(sim.tf_wire.stamps) == len(sim.vehicles) + len(sim.moving_joints) + objects
        assert ask(executor, clients, "pause", data=False).success
        t0 = sim.sim.state.t
        assert spin_until(executor, lambda: sim.sim.state.t > t0 + 1.0, timeout=120.0)
        names = _finite_states(executor, clients)
        for name in names[1:]:
            assert ask(executor, clients, "delete_entity", entity=name).result.result == Result.RESULT_OK
        assert _finite_states(executor, clients) == ["rov"]
        t1 = sim.sim.state.t
        assert spin_until(executor, lambda: sim.sim.state.t > t1 + 0.5, timeout=60.0)
        assert sim.thread.is_alive() and sim.failed is None
        assert np.all(np.isfinite(sim.sim.state.q)) and np.all(np.isfinite(sim.sim.state.v))
        assert not bad, bad[:10]
        print(f"entity services: {600 * SCALE} hostile requests {counts}; flood: {spawned} spawned, "
              f"{refused} refused; {sim.recoveries} physics resets")  # fmt: skip
