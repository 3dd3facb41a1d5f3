"""Write a ``System`` as a YAML description (the format of ``docs/config.md``).

Loading what ``save_yaml`` wrote gives the same model: every number is written with full
precision, and vehicles, thrusters and rigid connections are kept as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from transforms3d.euler import mat2euler, quat2euler

from ..hydro.current import SinusoidalCurrent, TabulatedCurrent
from ..hydro.params import Hydrodynamics
from ..scene import HeightmapSeabed, MeshSeabed, PlaneSeabed, Shape
from ..spatial import Array, Floats
from .sensor_specs import DEFAULTS
from .system import System, Vehicle


class _FlowDumper(yaml.SafeDumper):
    """Lists of numbers on one line (a matrix: one row per line); the rest in block style."""


def _represent_list(dumper: yaml.SafeDumper, data: list):
    flow = bool(data) and all(isinstance(x, (int, float)) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_FlowDumper.add_representer(list, _represent_list)


def _num(x: Any) -> float | int:
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 1e15 else x


def _vec(a: Floats | list | tuple) -> list:
    return [_num(x) for x in np.asarray(a).reshape(-1)]


def _diag_or_matrix(M: Array) -> list:
    M = np.asarray(M)
    if np.count_nonzero(M - np.diag(np.diag(M))) == 0:
        return _vec(np.diag(M))
    return [_vec(row) for row in M]


def _nonzero(*entries: tuple[str, Any, Callable[[Any], Any]]) -> dict:
    """``{key: write(value)}`` for each entry whose value is not all zero (the default left out)."""
    return {key: write(value) for key, value, write in entries if np.any(value)}


def _hydro(h: Hydrodynamics) -> dict:
    out = _nonzero(
        ("volume", h.volume, _num),
        ("center_of_buoyancy", h.center_of_buoyancy, _vec),
        ("added_mass", h.added_mass, _diag_or_matrix),
        ("linear_damping", h.linear_damping, _diag_or_matrix),
        ("quadratic_damping", h.quadratic_damping, _vec),
        ("damping_center", h.damping_center, _vec),
    )
    if h.hull is not None and h.hull.spec:
        out["hull"] = {k: (_vec(v) if isinstance(v, list | tuple) else v) for k, v in h.hull.spec}
    if h.drag is not None:
        d = h.drag
        out["drag"] = {
            "model": "cylinder",
            "length": _num(d.length),
            "radius": _num(d.radius),
            "axis": _vec(d.axis),
            "start": _vec(d.start),
            "drag_coefficient": _num(d.drag_coefficient),
            "points": int(d.points),
        }
    return out


def _environment(system: System) -> dict:
    env = system.environment
    out: dict = {"gravity": _num(env.gravity), "water_density": _num(env.density), "surface": env.surface}
    prof = env.current_profile
    if isinstance(prof, SinusoidalCurrent):
        out["current"] = {
            "type": "sinusoidal",
            "mean": _vec(prof.mean),
            "amplitude": _vec(prof.amplitude),
            "period": _num(prof.period),
            "phase": _vec(prof.phase),
        }
    elif isinstance(prof, TabulatedCurrent):
        out["current"] = {
            "type": "table",
            "time": _vec(prof.times),
            "velocity": [_vec(r) for r in prof.velocities],
        }
    elif prof is not None:
        raise ValueError(f"cannot write a current profile of type {type(prof).__name__}")
    elif np.any(env.current):
        out["current"] = _vec(env.current)
    if env.waves is not None:
        if not env.waves.spec:
            raise ValueError("cannot write waves that were not read from a description")
        out["waves"] = dict(env.waves.spec)
    return out


def _tether_entry(t) -> dict:
    """A ``tethers[]`` entry: every property written out (the preset's included)."""
    return {
        "name": t.name, "link": t.link, "position": _vec(t.position), "anchor": _vec(t.anchor),
        "length": _num(t.length), "segments": int(t.segments),
        **{k: _num(v) for k, v in t.properties.items()},
        "reel": {"speed": _num(t.reel_speed), "min_length": _num(t.min_length),
                 "max_length": _num(t.max_length), "max_tension": _num(t.max_tension)},
    }  # fmt: skip


def _joint_entry(model, i: int) -> dict:
    b, j = model.bodies[i], model.joints[i]
    joint: dict = {"name": b.joint_name, "type": j.type, "parent": model.bodies[model.parents[i]].name}
    joint["child"] = b.name
    joint["origin"] = {"xyz": _vec(b.origin_xyz), "rpy": _vec(b.origin_rpy)}
    if j.type in ("revolute", "continuous", "prismatic"):
        joint["axis"] = _vec(j.axis)
        limits = (
            ("lower", j.lower),
            ("upper", j.upper),
            ("effort", j.effort_limit),
            ("velocity", j.velocity_limit),
        )
        lim = {k: _num(v) for k, v in limits if np.isfinite(v)}
        if lim:
            joint["limits"] = lim
        if j.mimic is not None:
            joint["mimic"] = {"joint": j.mimic[0], "multiplier": _num(j.mimic[1]), "offset": _num(j.mimic[2])}
    return joint


def _link_entry(b) -> dict:
    link = {"name": b.name} | _nonzero(
        ("mass", b.mass, _num), ("center_of_mass", b.com, _vec), ("inertia", b.inertia, _diag_or_matrix)
    )
    if b.hydro is not None and _hydro(b.hydro):
        link["hydrodynamics"] = _hydro(b.hydro)
    if b.visuals:
        link["visual"] = [_visual_entry(v) for v in b.visuals]
    if b.collisions is not None:
        link["collision"] = [
            {k: x for k, x in _visual_entry(v).items() if k != "color"} for v in b.collisions
        ]
    return link


def _visual_entry(v) -> dict:
    size = {"box": _vec, "cylinder": lambda s: {"radius": _num(s[0]), "length": _num(s[1])},
            "sphere": lambda s: _num(s[0]), "mesh": lambda s: v.mesh}[v.shape](v.size)  # fmt: skip
    out: dict = {v.shape: size, "xyz": _vec(v.xyz), "rpy": _vec(v.rpy), "color": _vec(v.color)}
    if v.shape == "mesh":
        out["scale"] = _vec(v.size)
    return out


def _sensor_entry(s, root: str) -> dict:
    out: dict = {"type": s.type, "name": s.name}
    if s.link != root:
        out["link"] = s.link
    out |= _nonzero(("position", s.position, _vec), ("rpy", s.rpy, _vec))
    out.update({k: _num(v) for k, v in s.params if v != DEFAULTS[s.type][k]})
    if not s.noise:
        out["noise"] = False
    return out


def _thruster_entry(t) -> dict:
    th: dict = {"name": t.name, "link": t.body, "position": _vec(t.position), "direction": _vec(t.direction)}
    if t.motor is not None:
        th["motor"] = t.motor
    if t.reversed:
        th["reversed"] = True
    return th


def _vehicles(system: System) -> list[Vehicle]:
    """The system's vehicles, or one per tree for a system built in code without them."""
    if system.vehicles:
        return list(system.vehicles)
    model = system.model
    out = []
    for r in (i for i in range(model.nbodies) if model.parents[i] < 0):
        tree = [r]
        for i in range(r + 1, model.nbodies):
            if model.parents[i] in tree:
                tree.append(i)
        out.append(
            Vehicle(model.bodies[r].name, model.bodies[r].name, tuple(model.bodies[i].name for i in tree))
        )
    return out


def system_to_dict(system: System) -> dict:
    """The YAML description of ``system`` as plain data: one entry per vehicle, and a rigid
    connection for each vehicle whose root hangs from another vehicle."""
    model = system.model
    q = system.initial_q
    vehicles, connections = [], []
    held = {c.child for c in system.constraints}
    for veh in _vehicles(system):
        if veh.kind == "object":  # written in the scene (_objects)
            continue
        idx = [model.body_index(n) for n in veh.bodies]
        r = model.body_index(veh.root)
        entry: dict = {"name": veh.name}
        if model.parents[r] < 0 and model.joints[r].type == "fixed":
            entry["base"] = "fixed"
            root = model.bodies[r]
            if np.any(root.origin_xyz) or np.any(root.origin_rpy):  # where it is bolted
                entry["initial_pose"] = {"position": _vec(root.origin_xyz), "rpy": _vec(root.origin_rpy)}
        entry["links"] = [_link_entry(model.bodies[i]) for i in idx]
        joints = [_joint_entry(model, i) for i in idx if i != r]
        if joints:
            entry["joints"] = joints
        if veh.thrusters:
            entry["thrusters"] = [_thruster_entry(t) for t in veh.thrusters]
        if veh.sensors:
            entry["sensors"] = [_sensor_entry(s, veh.root) for s in veh.sensors]
        if veh.thruster_model != Vehicle.thruster_model:
            entry["thruster_model"] = {
                k: (v if isinstance(v, str) else _num(v)) for k, v in veh.thruster_model
            }
        if model.parents[r] < 0 and model.joints[r].type == "free" and veh.root not in held:
            s = model.q_slice(r)
            pose = {"position": _vec(q[s][:3]), "rpy": _vec(quat2euler(q[s][3:7], axes="sxyz"))}
            if np.any(pose["position"]) or np.any(pose["rpy"]):
                entry["initial_pose"] = pose
        elif model.parents[r] >= 0:
            c = _joint_entry(model, r)
            connections.append(
                {
                    "type": "rigid",
                    "name": c["name"],
                    "parent": c["parent"],
                    "child": c["child"],
                    "origin": c["origin"],
                }
            )
        init = {
            model.bodies[i].joint_name: _num(q[model.idx_q[i]])
            for i in idx
            if i != r and model.joints[i].nq == 1 and q[model.idx_q[i]] != 0.0
        }
        if init:
            entry["initial_positions"] = init
        vehicles.append(entry)
    out: dict = {"name": system.name}
    if system.description:
        out["description"] = system.description
    out["environment"] = _environment(system)
    out["vehicles"] = vehicles
    for con in system.constraints:
        rpy = _vec(mat2euler(np.asarray(con.E).T, axes="sxyz"))
        connections.append(
            {"type": "rigid", "method": "constraint", "name": con.name, "parent": con.parent,
             "child": con.child, "origin": {"xyz": _vec(con.r), "rpy": rpy}}
        )  # fmt: skip
    if connections:
        out["connections"] = connections
    contacts = [
        {"type": "seabed", "depth": _num(sb.depth), "stiffness": _num(sb.stiffness),
         "damping": _num(sb.damping), "friction": _num(sb.friction), "slip_velocity": _num(sb.slip_velocity),
         "points": [{"name": p.name, "link": p.link, "position": _vec(p.position)} for p in sb.points]}
        for sb in system.seabeds
    ] + [
        {"type": "anchor", "name": a.point.name, "link": a.point.link, "position": _vec(a.point.position),
         "anchor": _vec(a.anchor), "stiffness": _num(a.stiffness), "damping": _num(a.damping)}
        for a in system.anchors
    ]  # fmt: skip
    if contacts:
        out["contacts"] = contacts
    if system.tethers:
        out["tethers"] = [_tether_entry(t) for t in system.tethers]
    scene = _scene(system)
    if scene:
        out["scene"] = scene
    return out


def _shape_entry(shape: Shape) -> dict:
    """A shape's keys in a ``scene`` entry (a mesh by its absolute file name)."""
    out: dict = {"shape": shape.kind}
    if shape.kind == "mesh":
        out["file"] = str(Path(shape.mesh).resolve())
        out["scale"] = _vec(shape.size)
    else:
        out["size"] = _vec(shape.size)
    out["xyz"], out["rpy"] = _vec(shape.xyz), _vec(shape.rpy)
    return out


def _scene(system: System) -> dict:
    """The ``scene`` of a description: the seabed and the structures (``scene.Scene``)."""
    scene, out = system.scene, dict[str, object]()
    if scene is None:
        return out
    sb = scene.seabed
    if isinstance(sb, PlaneSeabed):
        out["seabed"] = {"type": "plane", "depth": _num(sb.depth), "slope": _vec(sb.slope)}
    elif isinstance(sb, HeightmapSeabed):
        out["seabed"] = {"type": "heightmap", "spacing": _num(sb.spacing), "origin": _vec(sb.origin),
                         "depths": [_vec(row) for row in sb.depths]}  # fmt: skip
    elif isinstance(sb, MeshSeabed):
        entry = _shape_entry(sb.shape)
        del entry["shape"]
        out["seabed"] = {"type": "mesh", **entry}
    if scene.structures:
        out["structures"] = [{"name": s.name, **_shape_entry(s.shape)} for s in scene.structures]
    if scene.contact is not None:
        law = scene.contact
        out["contact"] = {k: _num(getattr(law, k)) for k in law.__dataclass_fields__}
    objects = _objects(system)
    if objects:
        out["objects"] = objects
    return out


def _objects(system: System) -> list[dict]:
    """The free objects (``model.objects``) as ``scene.objects`` entries: shape, mass, pose and
    their hydrodynamics written out (the inertia follows from the shape and mass)."""
    model, q, out = system.model, system.initial_q, []
    for veh in system.vehicles:
        if veh.kind != "object":
            continue
        i = model.body_index(veh.root)
        body = model.bodies[i]
        shape = body.collisions[0] if body.collisions else body.visuals[0]
        entry: dict = {"name": veh.name, "shape": shape.shape}
        if shape.shape == "mesh":
            entry["file"], entry["scale"] = str(Path(shape.mesh).resolve()), _vec(shape.size)
        else:
            entry["size"] = _vec(shape.size)
        s = model.q_slice(i)
        entry["mass"] = _num(body.mass)
        entry["xyz"], entry["rpy"] = _vec(q[s][:3]), _vec(quat2euler(q[s][3:7], axes="sxyz"))
        if body.hydro is not None:
            entry["hydrodynamics"] = _hydro(body.hydro)
        if body.visuals:
            entry["color"] = _vec(body.visuals[0].color)
        out.append(entry)
    return out


def save_yaml(system: System, path: str | Path, header: str = "") -> None:
    """Write ``system`` to ``path``; ``header`` lines become comments at the top."""
    text = yaml.dump(system_to_dict(system), Dumper=_FlowDumper, sort_keys=False, width=110)
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    Path(path).write_text(comments + text)
