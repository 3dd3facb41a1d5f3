"""The simulator node's entities through the standard simulation interfaces (``ros.entities``)
over real DDS: a sphere spawned above the seabed falls and rests on it on TF, where the contact
law says; it is listed, its state read and set, and deleted (its frame leaves TF); vehicles keep
their topics and cannot be deleted; bad requests get the interface's result codes."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile
from ros_helpers import simulator, spin_until
from simulation_interfaces.msg import EntityCategory, EntityState, Result
from simulation_interfaces.srv import (
    DeleteEntity,
    GetEntities,
    GetEntitiesStates,
    GetEntityInfo,
    GetEntityState,
    GetSimulatorFeatures,
    SetEntityState,
    SpawnEntity,
)
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage

from uvms_sim.model.configs import resolve

pytestmark = pytest.mark.ros

K = 2.0e4  # N/m: the contact stiffness of the scene below
SEABED = 10.0  # m, NED depth


def scene_description(tmp_path) -> str:
    path = tmp_path / "entities.yaml"
    path.write_text(f"""
vehicles:
  - {{name: rov, include: {resolve("bluerov2")}, initial_pose: {{position: [0.0, 0.0, 5.0]}}}}
scene:
  seabed: {{type: plane, depth: {SEABED}}}
  contact: {{stiffness: {K}, restitution: 0.0}}
""")
    return str(path)


def services(user, ns: str = "/simulator/"):
    """Clients of the entity services and of ``pause`` and ``reset``, each found (discovery on
    a loaded machine can take seconds)."""
    kinds = {
        "spawn_entity": SpawnEntity, "delete_entity": DeleteEntity, "set_entity_state": SetEntityState,
        "get_entity_state": GetEntityState, "get_entities": GetEntities,
        "get_entities_states": GetEntitiesStates, "get_entity_info": GetEntityInfo,
        "get_simulator_features": GetSimulatorFeatures,
    }  # fmt: skip
    out = {name: (kind, user.create_client(kind, ns + name)) for name, kind in kinds.items()}
    out["pause"] = (SetBool, user.create_client(SetBool, "pause"))
    out["reset"] = (Trigger, user.create_client(Trigger, "reset"))
    for _, client in out.values():
        assert client.wait_for_service(timeout_sec=30.0)
    return out


def ask(executor, clients, service: str, /, **fields):
    kind, client = clients[service]
    request = kind.Request()
    for key, value in fields.items():
        setattr(request, key, value)
    future = client.call_async(request)  # a spawn rebuilds the model: seconds on a loaded machine
    assert spin_until(executor, future.done, timeout=60.0), service
    return future.result()


def pose(x: float, y: float, z: float, frame: str = "odom") -> PoseStamped:
    out = PoseStamped()
    out.header.frame_id = frame
    out.pose.position.x, out.pose.position.y, out.pose.position.z = float(x), float(y), float(z)
    out.pose.orientation.w = 1.0
    return out


def test_every_tf_row_is_its_bodys_pose_among_objects_and_an_arm():
    """The grasp scene (the Heavy, the Reach Alpha 5 with its revolute joints, its prismatic
    push rod and its fingers, ten free objects), paused: every transform of /tf is the pose the
    reference functions give for the simulator's state (``joint_quaternion`` with ``frames``'
    conversion for the roots, the placements' joint origins), to 1e-12; ``stamp_at`` gives each
    instant's stamp whatever it was asked before."""
    from transforms3d.quaternions import quat2mat

    from uvms_sim import frames
    from uvms_sim.model.kinematics import placements
    from uvms_sim.ros import messages

    with simulator(description="bluerov2_heavy_alpha5_grasp", use_sim_time=True, real_time_factor=0.0) as (
        node,
        user,
        executor,
    ):
        tf: list[TFMessage] = []
        user.create_subscription(TFMessage, "/tf", tf.append, 100)
        assert spin_until(executor, lambda: len(tf) > 2, timeout=60)
        node.loop.pause(True)
        spin_until(executor, lambda: False, timeout=0.5)  # a tick under way ends and publishes
        sim, model = node.sim, node.sim.model
        q = sim.state.q.copy()  # paused: the state of the last publish
        stamp = node.stamp_at(sim.state.t)

        def at_stamp():
            for m in reversed(tf):
                s = m.transforms[0].header.stamp
                if (s.sec, s.nanosec) == (stamp.sec, stamp.nanosec):
                    return m
            return None

        assert spin_until(executor, lambda: at_stamp() is not None)
        assert np.array_equal(sim.state.q, q)
        last = at_stamp()
        data = model.create_data()
        placements(model, data, q)
        tree = messages.tree_quaternions(model)
        rows = {t.child_frame_id: t.transform for t in last.transforms}
        objects = {vf.flu: vf.root for vf in node.object_frames}
        assert len(objects) == 10 and len(rows) == len(node.vehicles) + len(node.moving_joints) + 10
        checked = set()
        for io in node.vehicles:
            root = io.frames.root
            s = model.q_slice(root).start
            want = [
                *(frames.NED_TO_ENU @ data.p_world[root]),
                *frames.quat_ned_frd_to_enu_flu(q[s + 3 : s + 7]),
            ]
            checked.add(io.frames.flu)
            got = rows[io.frames.flu]
            assert _pose(got) == pytest.approx(want, abs=1e-12)
        for name, root in objects.items():
            s = model.q_slice(root).start
            want = [*(frames.NED_TO_ENU @ q[s : s + 3]), *frames.quat_ned_frd_to_enu_flu(q[s + 3 : s + 7])]
            checked.add(name)
            assert _pose(rows[name]) == pytest.approx(want, abs=1e-12)
        kinds = set()
        for i in node.moving_joints:
            w = messages.joint_quaternion(model, i, q, tree[i])
            w = w if w[0] >= 0.0 else -w
            name = node.tf_names[i]
            checked.add(name)
            kinds.add(model.joints[i].type)
            assert _pose(rows[name]) == pytest.approx([*data.r[i], *w], abs=1e-12), name
            # the rotation is the joint's placement (E is parent -> child)
            np.testing.assert_allclose(quat2mat(_pose(rows[name])[3:]), data.E[i].T, atol=1e-12)
        assert checked == set(rows) and {"revolute", "prismatic"} <= kinds
        # each instant its own stamp, asked in any order (the cache keeps the last one only)
        for t in (1.25, 2.5, 1.25, 1.25, 3.000000001):
            ns = round(t * 1e9)
            got = node.stamp_at(t)
            assert (got.sec, got.nanosec) == (ns // 1_000_000_000, ns % 1_000_000_000)


def _pose(t) -> list[float]:
    """A Transform's numbers as ``x y z``, then its quaternion ``w x y z``."""
    r = t.rotation
    return [t.translation.x, t.translation.y, t.translation.z, r.w, r.x, r.y, r.z]


def test_a_spawned_sphere_falls_onto_the_seabed_on_tf_and_is_listed_moved_and_deleted(tmp_path):
    """A 2 kg sphere of 5 cm radius spawned 0.4 m above the seabed (ENU z = -9.55) falls and
    rests with its centre at NED depth 10 - r + (W - B) / k, within 1e-5 m on TF (the contact
    is critically damped, restitution 0: settled after 3 s of simulated time to far better)."""
    with simulator(description=scene_description(tmp_path), real_time_factor=0.0) as (sim, user, executor):
        tf: list[TFMessage] = []
        user.create_subscription(TFMessage, "/tf", tf.append, 100)
        static: list[TFMessage] = []
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        user.create_subscription(TFMessage, "/tf_static", static.append, latched)
        described: list[String] = []
        user.create_subscription(String, "robot_description", described.append, latched)
        odom: list[Odometry] = []
        user.create_subscription(Odometry, "odom", odom.append, 10)
        clients = services(user)
        assert spin_until(executor, lambda: bool(odom and described))  # one vehicle: its topics unprefixed

        features = ask(executor, clients, "get_simulator_features").features
        assert {0, 1, 9, 10, 11} <= set(features.features) and list(features.spawn_formats) == ["yaml"]

        spec = "{shape: sphere, size: [0.05], mass: 2.0}"
        started = time.perf_counter()
        reply = ask(executor, clients, "spawn_entity", name="ball", resource_string=spec,
                    initial_pose=pose(2.0, 0.0, -9.55))  # fmt: skip
        latency = time.perf_counter() - started
        assert reply.result.result == Result.RESULT_OK, reply.result.error_message
        assert reply.entity_name == "ball"
        print(f"spawn_entity answered in {1e3 * latency:.1f} ms (loaded machine)")

        def ball():
            for m in reversed(tf[-20:]):
                for t in m.transforms:
                    if t.child_frame_id == "ball":
                        return t
            return None

        assert spin_until(executor, lambda: ball() is not None)
        assert ball().header.frame_id == "odom"
        start_z = ball().transform.translation.z
        assert start_z == pytest.approx(-9.55, abs=0.05)
        assert spin_until(executor, lambda: sim.sim.state.t > 3.5, timeout=60)
        tf.clear()
        assert spin_until(executor, lambda: ball() is not None)
        volume = 4.0 / 3.0 * math.pi * 0.05**3
        env = sim.sim.env
        rest = SEABED - 0.05 + (2.0 - env.density * volume) * env.gravity / K
        t = ball().transform
        assert -t.translation.z == pytest.approx(rest, abs=1e-5)
        assert (t.translation.x, t.translation.y) == pytest.approx((2.0, 0.0), abs=1e-6)
        # spawned level, it falls straight down and keeps that attitude (its /tf row comes from
        # its free joint's quaternion, converted to ENU/FLU with the vehicles' in one product)
        r = t.rotation
        assert (r.w, r.x, r.y, r.z) == pytest.approx((1.0, 0.0, 0.0, 0.0), abs=1e-9)
        # its FRD frame under it, and a link of robot_description (RViz draws it by TF)
        frd = [x for m in static for x in m.transforms if x.child_frame_id == "ball_frd"]
        assert frd and frd[-1].header.frame_id == "ball"
        assert spin_until(executor, lambda: 'link name="ball_frd"' in described[-1].data)
        assert odom[-1].child_frame_id == "base_link"  # the vehicle's topics are unchanged

        listed = ask(executor, clients, "get_entities")
        assert listed.result.result == Result.RESULT_OK and list(listed.entities) == ["rov", "ball"]
        robot = EntityCategory(category=EntityCategory.CATEGORY_ROBOT)
        robots = ask(executor, clients, "get_entities", filters=_filters(categories=[robot]))
        assert list(robots.entities) == ["rov"]
        assert list(ask(executor, clients, "get_entities", filters=_filters("^b")).entities) == ["ball"]
        info = ask(executor, clients, "get_entity_info", entity="ball").info
        assert info.category.category == EntityCategory.CATEGORY_OBJECT

        state = ask(executor, clients, "get_entity_state", entity="ball")
        assert state.result.result == Result.RESULT_OK and state.state.header.frame_id == "odom"
        assert -state.state.pose.position.z == pytest.approx(rest, abs=1e-5)

        # set while paused: read back exactly, velocities expressed in odom (ENU)
        assert ask(executor, clients, "pause", data=True).success
        new = EntityState()
        new.header.frame_id = "odom"
        new.pose = pose(3.0, 1.0, -8.0).pose
        new.pose.orientation.z = new.pose.orientation.w = math.sqrt(0.5)  # yawed 90 degrees
        new.twist.linear.x, new.twist.angular.z = 0.5, 0.2
        reply = ask(executor, clients, "set_entity_state", entity="ball", state=new)
        assert reply.result.result == Result.RESULT_OK, reply.result.error_message
        got = ask(executor, clients, "get_entity_state", entity="ball").state
        p, o, v, w = got.pose.position, got.pose.orientation, got.twist.linear, got.twist.angular
        assert (p.x, p.y, p.z) == pytest.approx((3.0, 1.0, -8.0), abs=1e-12)
        assert abs(o.w * new.pose.orientation.w + o.z * new.pose.orientation.z) == pytest.approx(
            1.0, abs=1e-12
        )
        assert (v.x, v.y, v.z, w.x, w.y, w.z) == pytest.approx((0.5, 0, 0, 0, 0, 0.2), abs=1e-12)
        # the vehicle too (as set_pose: a teleport)
        new.twist.linear.x = new.twist.angular.z = 0.0
        new.pose.position.z = -3.0
        assert (
            ask(executor, clients, "set_entity_state", entity="rov", state=new).result.result
            == Result.RESULT_OK
        )
        got = ask(executor, clients, "get_entity_state", entity="rov").state.pose.position
        assert (got.x, got.y, got.z) == pytest.approx((3.0, 1.0, -3.0), abs=1e-12)
        states = ask(executor, clients, "get_entities_states")
        assert list(states.entities) == ["rov", "ball"] and len(states.states) == 2
        assert ask(executor, clients, "pause", data=False).success

        # refusals, each with the interface's code
        again = ask(
            executor, clients, "spawn_entity", name="ball", resource_string=spec, initial_pose=pose(0, 3, -9)
        )
        assert again.result.result == SpawnEntity.Response.NAME_NOT_UNIQUE
        renamed = ask(executor, clients, "spawn_entity", name="ball", allow_renaming=True,
                      resource_string=spec, initial_pose=pose(0.0, 3.0, -9.0))  # fmt: skip
        assert renamed.result.result == Result.RESULT_OK and renamed.entity_name == "ball_1"
        inside = ask(executor, clients, "spawn_entity", name="buried", resource_string=spec,
                     initial_pose=pose(0.0, -3.0, -SEABED))  # fmt: skip
        assert (
            inside.result.result == SpawnEntity.Response.INVALID_POSE
            and "inside" in inside.result.error_message
        )
        assert (
            ask(executor, clients, "delete_entity", entity="rov").result.result
            == Result.RESULT_OPERATION_FAILED
        )
        assert (
            ask(executor, clients, "delete_entity", entity="nothing").result.result == Result.RESULT_NOT_FOUND
        )

        # deleted: gone from TF, from the list and from the state service
        assert ask(executor, clients, "delete_entity", entity="ball").result.result == Result.RESULT_OK
        tf.clear()
        assert spin_until(executor, lambda: len(tf) > 5)
        assert ball() is None
        assert list(ask(executor, clients, "get_entities").entities) == ["rov", "ball_1"]
        gone = ask(executor, clients, "get_entity_state", entity="ball")
        assert gone.result.result == Result.RESULT_NOT_FOUND
        assert spin_until(executor, lambda: 'link name="ball_frd"' not in described[-1].data)
        assert sim.thread.is_alive() and sim.recoveries == 0


def _filters(pattern: str = "", categories=()):
    from simulation_interfaces.msg import EntityFilters

    return EntityFilters(filter=pattern, categories=list(categories))


def test_a_yaml_file_as_uri_and_the_world_frame(tmp_path):
    """``uri`` names a .yaml object (its mesh-free keys as in a description); a pose in the world
    frame (``map``, odom placed by ``world_offset``) is turned into odom; ``reset`` puts an object
    spawned at run time back where it was spawned."""
    (tmp_path / "box.yaml").write_text("{shape: box, size: [0.2, 0.1, 0.1], density: 2000.0}\n")
    with simulator(
        description=scene_description(tmp_path), real_time_factor=1.0, world_offset=[10.0, 0.0, math.pi / 2]
    ) as (sim, user, executor):
        clients = services(user)
        reply = ask(executor, clients, "spawn_entity", name="box", uri=f"file://{tmp_path}/box.yaml",
                    initial_pose=pose(10.0, 2.0, -9.0, frame="map"))  # fmt: skip
        assert reply.result.result == Result.RESULT_OK, reply.result.error_message
        # map (10, 2) is odom (2, 0) with odom turned by 90 degrees at (10, 0)
        state = ask(executor, clients, "get_entity_state", entity="box").state.pose.position
        assert (state.x, state.y) == pytest.approx((2.0, 0.0), abs=1e-3)
        # reset (paused, so nothing moves after it): the box back where it was spawned
        assert ask(executor, clients, "pause", data=True).success
        assert ask(executor, clients, "reset").success
        state = ask(executor, clients, "get_entity_state", entity="box").state.pose.position
        assert (state.x, state.y, state.z) == pytest.approx((2.0, 0.0, -9.0), abs=1e-9)
        assert ask(executor, clients, "pause", data=False).success
        missing = ask(executor, clients, "spawn_entity", name="b2", uri=str(tmp_path / "none.yaml"),
                      initial_pose=pose(0, 0, -9))  # fmt: skip
        assert missing.result.result == Result.RESULT_NOT_FOUND
        ball = "{shape: sphere, size: [0.1], mass: 1}"
        elsewhere = ask(executor, clients, "spawn_entity", name="b5", resource_string=ball,
                        initial_pose=pose(0, 0, -9, frame="base_link"))  # fmt: skip
        assert (
            elsewhere.result.result == SpawnEntity.Response.INVALID_POSE
            and "frame" in elsewhere.result.error_message
        )
        sdf = ask(
            executor, clients, "spawn_entity", name="b3", uri="model://box.sdf", initial_pose=pose(0, 0, -9)
        )
        assert sdf.result.result == SpawnEntity.Response.UNSUPPORTED_FORMAT
        mesh = ask(executor, clients, "spawn_entity", name="b4", initial_pose=pose(0, 0, -9),
                   resource_string="{shape: mesh, file: nowhere.stl, mass: 1.0}")  # fmt: skip
        assert mesh.result.result == SpawnEntity.Response.MISSING_ASSETS
        assert np.all(np.isfinite(sim.sim.state.q))
