"""The simulator node's entities through the standard ROS 2 simulation interfaces
(``simulation_interfaces``, as Gazebo and O3DE serve them): ``~/spawn_entity``,
``~/delete_entity``, ``~/set_entity_state``, ``~/get_entity_state``, ``~/get_entities``,
``~/get_entities_states``, ``~/get_entity_info`` and ``~/get_simulator_features``.

The entities are the free vehicles (category ROBOT; their frame is their ``base_link``) and
the free objects of the scene (category OBJECT; their frame is ``<name>``, FLU as a vehicle's,
with ``<name>_frd`` under it). Poses and twists are of that frame, in ``header.frame_id``: empty
or the node's ``frame_id`` (``odom``, ENU) or its ``world_frame``; a twist is expressed in that
frame (linear: of the entity frame's origin). What is spawned is a free object: the mapping a
description's ``scene.objects`` entry is (``model.objects``), as YAML in ``resource_string`` or
in a ``.yaml`` file named by ``uri`` (a path or ``file://`` URI); the request's ``initial_pose``
places it (a ``xyz`` or ``rpy`` in the resource is replaced). ``Simulator.add_object``,
``remove_object`` and ``place_object`` do the work; a vehicle is moved as ``set_pose`` moves it.

Every refusal is a result code of the interface with a one-line message; nothing a request
holds can stop the node or put a non-finite value in its state.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
from rclpy.exceptions import InvalidNamespaceException
from rclpy.validate_namespace import validate_namespace
from simulation_interfaces.msg import EntityCategory, EntityState, Result, SimulatorFeatures
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
from transforms3d.euler import quat2euler
from transforms3d.quaternions import qconjugate, qmult, quat2mat, rotate_vector

from .. import frames
from ..model import ConfigError
from ..model.yaml_source import parse_yaml
from ..sensors import current_accelerations
from . import messages
from .parameters import MAX_POSITION

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a TF frame, URDF link and view path as it is
MAX_RESOURCE = 64 * 1024  # bytes of YAML for one object (a mesh is a file, not text)
MAX_RESOURCE_NODES = 10_000  # values of that YAML with its aliases expanded
MAX_OBJECTS = 100  # objects at once: each is a body of the system, stepped with the vehicles
MAX_SPEED = 100.0  # m/s and rad/s of a twist set (fifty times what an ROV reaches)
MAX_FILTER = 1000  # characters of a GetEntities regular expression
FEATURES = (
    SimulatorFeatures.SPAWNING,
    SimulatorFeatures.DELETING,
    SimulatorFeatures.SPAWNING_RESOURCE_STRING,
    SimulatorFeatures.ENTITY_CATEGORIES,
    SimulatorFeatures.ENTITY_STATE_GETTING,
    SimulatorFeatures.ENTITY_STATE_SETTING,
    SimulatorFeatures.ENTITY_INFO_GETTING,
)


class RefusedError(Exception):
    """A request refused with ``code`` (a ``Result`` code or the service's own) and a message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (False for a name the system cannot take)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def finite(*values: float) -> bool:
    return all(math.isfinite(x) for x in values)


class Entities:
    """The services of ``node`` (a ``SimulatorNode``), all run under its loop lock."""

    def __init__(self, node) -> None:
        self.node = node
        self.base_dir = Path(node.description_path).parent
        services = (
            (SpawnEntity, "spawn_entity", self.on_spawn),
            (DeleteEntity, "delete_entity", self.on_delete),
            (SetEntityState, "set_entity_state", self.on_set_state),
            (GetEntityState, "get_entity_state", self.on_get_state),
            (GetEntities, "get_entities", self.on_get_entities),
            (GetEntitiesStates, "get_entities_states", self.on_get_entities_states),
            (GetEntityInfo, "get_entity_info", self.on_get_info),
            (GetSimulatorFeatures, "get_simulator_features", self.on_features),
        )
        for kind, name, callback in services:
            node.create_service(kind, f"~/{name}", self._guarded(callback))

    def _guarded(self, callback):
        """``callback`` with every refusal, and anything unforeseen, as a result (a callback
        that raised would stop the node's executor)."""

        def serve(request, response):
            try:
                with self.node.lock:
                    callback(request, response)
                if hasattr(response, "result"):
                    response.result.result = Result.RESULT_OK
            except RefusedError as exc:
                response.result = Result(result=exc.code, error_message=str(exc))
            except Exception as exc:  # a bug: said as one, and the node goes on
                response.result = Result(
                    result=Result.RESULT_OPERATION_FAILED,
                    error_message=f"internal error: {type(exc).__name__}: {str(exc)[:300]}",
                )
            return response

        return serve

    # -- the entities -------------------------------------------------------------------------
    def entities(self) -> dict[str, tuple[messages.VehicleFrames, str]]:
        """Every entity by name: its frames and its kind (``vehicle`` or ``object``)."""
        node = self.node
        out = {io.frames.name: (io.frames, "vehicle") for io in node.vehicles}
        out.update({vf.name: (vf, "object") for vf in node.object_frames})
        return out

    def entity(self, name: str) -> tuple[messages.VehicleFrames, str]:
        found = self.entities().get(name)
        if found is None:
            raise RefusedError(Result.RESULT_NOT_FOUND, f"no entity named {name[:100]!r}")
        return found

    # -- frames: the request's reference frame and odom (ENU) ---------------------------------
    def _frame_rotation(self, frame_id: str, invalid: int) -> tuple[np.ndarray, np.ndarray]:
        """(origin, quaternion) of ``frame_id`` in odom; ``RefusedError(invalid)`` for a frame it
        does not know (the service's INVALID_POSE: the pose cannot be placed)."""
        node = self.node
        if frame_id in ("", node.frame_id):
            return np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
        if node.world_frame and frame_id == node.world_frame:  # odom in the world: its inverse
            offset, quat = node.world_offset
            inverse = qconjugate(quat)
            return -rotate_vector(offset, inverse), inverse
        raise RefusedError(
            invalid,
            f"unknown frame {frame_id[:100]!r}: poses are in {node.frame_id!r}"
            + (f" or {node.world_frame!r}" if node.world_frame else ""),
        )

    def pose_in_odom(self, frame_id: str, pose, invalid: int) -> tuple[np.ndarray, np.ndarray]:
        """A pose message in ``frame_id`` as (position, unit quaternion) in odom (ENU/FLU);
        ``RefusedError(invalid)`` for NaN, a zero quaternion or a position beyond ``MAX_POSITION``."""
        p, o = pose.position, pose.orientation
        pos = np.array([p.x, p.y, p.z], dtype=float)
        quat = np.array([o.w, o.x, o.y, o.z], dtype=float)
        scale = float(np.max(np.abs(quat))) if finite(*quat) else 0.0
        if not (finite(*pos) and scale > 0.0 and np.all(np.abs(pos) <= MAX_POSITION)):
            raise RefusedError(
                invalid, f"pose refused: NaN, a zero quaternion or a position beyond {MAX_POSITION:g} m"
            )
        quat = quat / scale
        quat = quat / np.linalg.norm(quat)
        origin, rot = self._frame_rotation(frame_id, invalid)
        return origin + rotate_vector(pos, rot), qmult(rot, quat)

    # -- services ------------------------------------------------------------------------------
    def on_spawn(self, request: SpawnEntity.Request, response: SpawnEntity.Response) -> None:
        node = self.node
        spec, base_dir = self._resource(request)
        name = self._spawn_name(request.name or str(spec.get("name", "") or ""), request.allow_renaming)
        if request.entity_namespace:  # objects have no interfaces to put under it: checked only
            try:
                validate_namespace(request.entity_namespace)
            except InvalidNamespaceException as exc:
                raise RefusedError(SpawnEntity.Response.NAMESPACE_INVALID, str(exc).splitlines()[0]) from None
        header = request.initial_pose.header
        p, quat = self.pose_in_odom(
            header.frame_id, request.initial_pose.pose, SpawnEntity.Response.INVALID_POSE
        )
        if len(node.object_frames) >= MAX_OBJECTS:
            raise RefusedError(Result.RESULT_OPERATION_FAILED, f"at most {MAX_OBJECTS} objects at once")
        spec["name"] = name
        spec["xyz"] = [float(x) for x in frames.position_enu_to_ned(p)]
        spec["rpy"] = [float(x) for x in quat2euler(frames.quat_enu_flu_to_ned_frd(quat), axes="sxyz")]
        try:
            node.sim.add_object(spec, base_dir)
        except ConfigError as exc:
            code = SpawnEntity.Response.RESOURCE_PARSE_ERROR
            if exc.path.endswith("file"):
                f = Path(str(spec.get("file", "")))
                code = (
                    SpawnEntity.Response.UNSUPPORTED_ASSETS
                    if is_file(f if f.is_absolute() else base_dir / f)
                    else SpawnEntity.Response.MISSING_ASSETS
                )
            raise RefusedError(code, exc.message if exc.path else str(exc)) from None
        except ValueError as exc:  # inside another body or the scene
            raise RefusedError(SpawnEntity.Response.INVALID_POSE, str(exc)) from None
        node.model_changed()
        response.entity_name = name

    def _resource(self, request: SpawnEntity.Request) -> tuple[dict, Path]:
        """The object's mapping, and the folder its relative mesh ``file`` is found from."""
        base_dir = self.base_dir
        if request.uri:
            url = urlparse(request.uri)
            if url.scheme not in ("", "file"):
                raise RefusedError(
                    SpawnEntity.Response.UNSUPPORTED_FORMAT,
                    f"uri scheme {url.scheme[:20]!r}: a path or file:// URI of a .yaml object",
                )
            path = Path(unquote(url.path) if url.scheme else request.uri)
            path = path if path.is_absolute() else self.base_dir / path
            if path.suffix.lower() not in (".yaml", ".yml"):
                raise RefusedError(
                    SpawnEntity.Response.UNSUPPORTED_FORMAT,
                    f"{path.name[:100]!r}: spawn_formats is yaml (a scene.objects entry)",
                )
            if not is_file(path):
                raise RefusedError(Result.RESULT_NOT_FOUND, f"no file {str(path)[:200]!r}")
            if path.stat().st_size > MAX_RESOURCE:
                raise RefusedError(
                    SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                    f"{path.name}: larger than {MAX_RESOURCE} bytes",
                )
            try:
                text, where, base_dir = path.read_text(encoding="utf-8"), str(path), path.parent
            except (OSError, UnicodeDecodeError) as exc:
                raise RefusedError(SpawnEntity.Response.RESOURCE_PARSE_ERROR, f"{path.name}: {exc}") from None
        elif request.resource_string:
            text, where = request.resource_string, "resource_string"
            if len(text) > MAX_RESOURCE:
                raise RefusedError(
                    SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                    f"resource_string of {len(text)} characters: at most {MAX_RESOURCE}",
                )
        else:
            raise RefusedError(SpawnEntity.Response.NO_RESOURCE, "uri and resource_string are both empty")
        try:
            spec = parse_yaml(text, where, MAX_RESOURCE_NODES)
        except ConfigError as exc:
            raise RefusedError(SpawnEntity.Response.RESOURCE_PARSE_ERROR, str(exc)[:500]) from None
        if not isinstance(spec, dict):
            raise RefusedError(
                SpawnEntity.Response.RESOURCE_PARSE_ERROR,
                f"{where}: an object is a mapping (shape, size, mass...), got {type(spec).__name__}",
            )
        return dict(spec), base_dir

    def _spawn_name(self, name: str, renaming: bool) -> str:
        """The requested name, or with ``allow_renaming`` the first free one after it."""
        taken = set(self.entities()) | {b.name for b in self.node.sim.model.bodies}
        if not name and not renaming:
            raise RefusedError(SpawnEntity.Response.NAME_INVALID, "no name, and allow_renaming is false")
        if name and not NAME.fullmatch(name):
            raise RefusedError(
                SpawnEntity.Response.NAME_INVALID,
                f"name {name[:100]!r}: letters, digits and _ (not first a digit), at most 64",
            )
        if name and name not in taken:
            return name
        if not renaming:
            raise RefusedError(SpawnEntity.Response.NAME_NOT_UNIQUE, f"the name {name!r} is taken")
        stem = (name or "object")[:56]
        k = 1
        while f"{stem}_{k}" in taken:
            k += 1
        return f"{stem}_{k}"

    def on_delete(self, request: DeleteEntity.Request, response: DeleteEntity.Response) -> None:
        _, kind = self.entity(request.entity)
        if kind != "object":
            raise RefusedError(
                Result.RESULT_OPERATION_FAILED,
                f"{request.entity!r} is a vehicle of the description: only objects are deleted",
            )
        self.node.sim.remove_object(request.entity)
        self.node.model_changed()

    def on_set_state(self, request: SetEntityState.Request, response: SetEntityState.Response) -> None:
        node, sim = self.node, self.node.sim
        vf, kind = self.entity(request.entity)
        state = request.state
        frame_id = state.header.frame_id
        p, quat = self.pose_in_odom(frame_id, state.pose, SetEntityState.Response.INVALID_POSE)
        lin, ang = state.twist.linear, state.twist.angular
        twist = np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z], dtype=float)
        if not (finite(*twist) and np.all(np.abs(twist) <= MAX_SPEED)):
            raise RefusedError(
                SetEntityState.Response.INVALID_POSE,
                f"twist refused: NaN, or beyond {MAX_SPEED:g} m/s or rad/s",
            )
        _, rot = self._frame_rotation(frame_id, SetEntityState.Response.INVALID_POSE)
        q_ned = frames.quat_enu_flu_to_ned_frd(quat)
        R = quat2mat(q_ned)  # body FRD -> world NED
        to_ned = frames.NED_TO_ENU.T @ quat2mat(rot)  # the request's frame -> NED
        body = np.concatenate((R.T @ to_ned @ twist[:3], R.T @ to_ned @ twist[3:]))
        xyz = frames.position_enu_to_ned(p)
        if kind == "object":
            try:
                sim.place_object(vf.name, xyz, quat2euler(q_ned, axes="sxyz"), body)
            except ValueError as exc:
                raise RefusedError(SetEntityState.Response.INVALID_POSE, str(exc)) from None
            return
        s, sv = sim.model.q_slice(vf.root), sim.model.v_slice(vf.root)
        q, v = sim.state.q.copy(), sim.state.v.copy()
        q[s.start : s.start + 3], q[s.start + 3 : s.start + 7], v[sv] = xyz, q_ned, body
        t = sim.state.t
        sim.reset(q, v)  # as set_pose: a teleport, time running on
        sim.state.t = t
        io = next(io for io in node.vehicles if io.frames.name == vf.name)
        if io.estimator is not None:  # the autopilot is aligned again where the vehicle now is
            io.estimator.started = False

    def state(self, name: str, acc: np.ndarray) -> EntityState:
        """The ground truth of ``name`` in odom (ENU; its frame's origin and FLU axes)."""
        node, sim = self.node, self.node.sim
        vf, _ = self.entity(name)
        root = vf.root
        s, sv = sim.model.q_slice(root), sim.model.v_slice(root)
        q, nu = sim.state.q[s], sim.state.v[sv]
        R = frames.NED_TO_ENU @ quat2mat(q[3:7] / np.linalg.norm(q[3:7]))  # body FRD -> odom ENU
        a = acc[root]
        out = EntityState()
        out.header.stamp = node.stamp()
        out.header.frame_id = node.frame_id
        messages.vector_msg(out.pose.position, frames.position_ned_to_enu(q[:3]))
        messages.quat_msg(out.pose.orientation, frames.quat_ned_frd_to_enu_flu(q[3:7]))
        messages.vector_msg(out.twist.linear, R @ nu[:3])
        messages.vector_msg(out.twist.angular, R @ nu[3:])
        messages.vector_msg(out.acceleration.linear, R @ (a[:3] + np.cross(nu[3:], nu[:3])))
        messages.vector_msg(out.acceleration.angular, R @ a[3:])
        return out

    def on_get_state(self, request: GetEntityState.Request, response: GetEntityState.Response) -> None:
        self.entity(request.entity)
        _, acc = current_accelerations(self.node.sim)
        response.state = self.state(request.entity, acc)

    def matching(self, filters) -> list[str]:
        """The names that pass ``filters``: the regular expression (Python's ``re``, searched in
        the name as POSIX ``regexec`` does) and the categories; tags and bounds are not kept."""
        if filters.tags.tags:
            raise RefusedError(Result.RESULT_FEATURE_UNSUPPORTED, "entities have no tags")
        if filters.bounds.type != filters.bounds.TYPE_EMPTY or filters.bounds.points:
            raise RefusedError(Result.RESULT_FEATURE_UNSUPPORTED, "filtering by bounds is not supported")
        if len(filters.filter) > MAX_FILTER:
            raise RefusedError(Result.RESULT_OPERATION_FAILED, f"filter longer than {MAX_FILTER} characters")
        try:
            pattern = re.compile(filters.filter)
        except (re.error, RecursionError, OverflowError) as exc:
            raise RefusedError(
                Result.RESULT_OPERATION_FAILED, f"filter is not a regular expression: {exc}"
            ) from None
        wanted = {c.category for c in filters.categories}
        out = []
        for name, (_, kind) in self.entities().items():
            category = EntityCategory.CATEGORY_ROBOT if kind == "vehicle" else EntityCategory.CATEGORY_OBJECT
            if (not wanted or category in wanted) and pattern.search(name):
                out.append(name)
        return out

    def on_get_entities(self, request: GetEntities.Request, response: GetEntities.Response) -> None:
        response.entities = self.matching(request.filters)

    def on_get_entities_states(
        self, request: GetEntitiesStates.Request, response: GetEntitiesStates.Response
    ) -> None:
        names = self.matching(request.filters)
        _, acc = current_accelerations(self.node.sim)
        response.entities = names
        response.states = [self.state(n, acc) for n in names]

    def on_get_info(self, request: GetEntityInfo.Request, response: GetEntityInfo.Response) -> None:
        vf, kind = self.entity(request.entity)
        robot = kind == "vehicle"
        response.info.category.category = (
            EntityCategory.CATEGORY_ROBOT if robot else EntityCategory.CATEGORY_OBJECT
        )
        response.info.description = (
            f"vehicle of {self.node.system.name}, frame {vf.flu}" if robot else f"free object, frame {vf.flu}"
        )

    def on_features(
        self, request: GetSimulatorFeatures.Request, response: GetSimulatorFeatures.Response
    ) -> None:
        response.features.features = list(FEATURES)
        response.features.spawn_formats = ["yaml"]
        response.features.custom_info = (
            "uvms_sim: spawn free objects, each a scene.objects entry of a description as YAML "
            "(docs/config.md); poses in odom (ENU)"
        )
