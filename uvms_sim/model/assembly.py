"""Assembling read specs (``uvms_sim.model.reader``) into a ``System``: the tree ordered
parent first, FLU roots, vehicles bolted together or placed where their rigid connections say,
the initial configuration, the joint-space inertia checked (positive definite), and warnings
for likely unit slips.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat, euler2quat
from transforms3d.quaternions import mat2quat

from ..hydro.environment import Environment
from ..log import logger
from ..scene import Scene
from ..spatial import Array
from .body import Body
from .crba import crba
from .joints import Joint
from .kinematics import placements
from .model import Model
from .objects import read_objects
from .reader import (
    JointSpec,
    LinkSpec,
    VehicleSpec,
    read_connection,
    read_contacts,
    read_environment,
    read_vehicle,
)
from .scene_reader import read_scene, seafloor_as_seabed
from .system import (
    Connection,
    Seabed,
    System,
    Vehicle,
    default_scene,
)
from .water_reader import read_tethers
from .yaml_source import Cursor


def assemble(top: Cursor, base_dir: Path, source: Path) -> System:
    top.mapping(
        ("vehicles",),
        ("name", "description", "sources", "environment", "connections", "contacts", "tethers", "scene"),
    )
    env = read_environment(top["environment"]) if "environment" in top else Environment(surface=0.0)
    vehicles = [read_vehicle(c, base_dir, k) for k, c in enumerate(top["vehicles"].seq("a list of vehicles"))]
    if not vehicles:
        raise top["vehicles"].error("expected at least one vehicle")
    if "scene" in top and isinstance(top["scene"].value, dict) and "objects" in top["scene"]:
        vehicles += read_objects(top["scene"]["objects"], base_dir, env.density)
    names = [v.name for v in vehicles]
    for v in vehicles:
        if names.count(v.name) > 1:
            raise v.cur.error(f"vehicle name {v.name!r} is used twice")
    links = {ls.name: ls for v in vehicles for ls in v.links}
    joints = [j for v in vehicles for j in v.joints]
    owner = {ls.name: v for v in vehicles for ls in v.links}
    if len(links) != sum(len(v.links) for v in vehicles):
        seen: set[str] = set()
        for v in vehicles:
            for ls in v.links:
                if ls.name in seen:
                    raise ls.cur.error(f"link name {ls.name!r} is used by another vehicle too (use `prefix`)")
                seen.add(ls.name)
    attached: dict[str, JointSpec] = {}
    constrained: list[JointSpec] = []
    for c in top["connections"].seq("a list of connections") if "connections" in top else []:
        joint, method = read_connection(c, links, owner)
        if method == "constraint":
            constrained.append(joint)
            continue
        if joint.child in attached:
            raise c.error(f"vehicle root {joint.child!r} is connected twice")
        attached[joint.child] = joint
    for v in vehicles:
        if v.root in attached:
            if v.base == "fixed":
                raise attached[v.root].cur.error(
                    f"vehicle {v.name!r} has base: fixed and cannot also be connected"
                )
            joints.append(attached[v.root])
    bodies, order = _order_bodies(vehicles, links, joints, attached)
    default_name = vehicles[0].name if len(vehicles) == 1 else source.stem
    model = Model(bodies, name=top["name"].text() if "name" in top else default_name)
    _check_mimics(model, joints)
    q0 = _initial_configuration(model, vehicles, attached)
    by_joint = {b.joint_name: i for i, b in enumerate(model.bodies)}
    for i, j in enumerate(model.joints):  # a mimic joint starts where its leader puts it
        if j.mimic is not None:
            lead, multiplier, offset = j.mimic
            q0[model.idx_q[i]] = multiplier * q0[model.idx_q[by_joint[lead]]] + offset
    connections = _place_constrained(model, q0, constrained, owner)
    _check_mass_matrix(model, top)
    seabeds, anchors = read_contacts(top["contacts"], set(order)) if "contacts" in top else ((), ())
    tethers = read_tethers(top["tethers"], model, q0) if "tethers" in top else ()
    scene = _scene(top, base_dir, env, seabeds)
    system = System(
        name=model.name,
        model=model,
        environment=env,
        vehicles=tuple(
            Vehicle(
                v.name,
                v.root,
                tuple(ls.name for ls in v.links if ls.name in order),
                tuple(v.thrusters),
                v.thruster_model,
                v.frame,
                v.sensors,
                v.kind,
            )
            for v in vehicles
        ),
        initial_q=q0,
        source=str(source),
        description=str(top["description"].value) if "description" in top else "",
        constraints=connections,
        seabeds=seabeds,
        anchors=anchors,
        tethers=tethers,
        scene=scene,
    )
    _warn_slips(system, source)
    return system


def _scene(top: Cursor, base_dir: Path, env: Environment, seabeds: tuple[Seabed, ...]) -> Scene:
    """The description's one seabed: ``scene.seabed``, or ``environment.seafloor`` (the older
    key, read as a plane seabed), or the plane of the contact seabed; a contact seabed lies on
    the scene's plane. ``environment.seafloor`` is then that plane (the tether's water depth)."""
    scene = read_scene(top["scene"], base_dir) if "scene" in top else Scene()
    if env.seafloor is not None:
        floor = top["environment"]["seafloor"]
        if scene.seabed is not None:
            raise floor.error(
                "the seabed is declared twice: keep `scene.seabed` and remove `environment.seafloor`"
            )
        scene = replace(scene, seabed=seafloor_as_seabed(floor, env.seafloor))
    elif scene.seabed is None and seabeds:
        scene = default_scene(env, seabeds)
    plane = scene.plane
    for sb in seabeds:
        if plane is None or plane.slope != (0.0, 0.0) or abs(plane.depth - sb.depth) > 1e-9:
            raise top["contacts"].error(
                f"a contact seabed at depth {sb.depth:g} is not the scene's seabed: contacts touch the "
                "scene's seabed, a horizontal plane at the same depth"
            )
    env.seafloor = None if plane is None else plane.seafloor
    return scene


def _warn_slips(system: System, source: Path) -> None:
    """Warnings (not errors: such a system can be meant) for the likely unit slips of a
    description: buoyancy far from the weight (a volume in litres), a water density that is no
    water's, a vehicle with no volume at all."""
    env, m = system.environment, system.model
    if not 500.0 <= env.density <= 1100.0:
        logger.warning(f"{source}: water_density {env.density:g} kg/m^3 is no water's (1000 fresh, 1025 sea)")
    for v in system.vehicles:
        if v.kind == "object":  # a stone sinks, a float floats: both are meant
            continue
        idx = [m.body_index(b) for b in v.bodies]
        mass, volume = float(m.mass[idx].sum()), float(m.volume[idx].sum())
        if mass > 0 and volume == 0.0:
            logger.warning(
                f"{source}: vehicle {v.name} has no volume: no buoyancy at all (give hydrodynamics.volume)"
            )
        elif mass > 0 and not 0.3 <= env.density * volume / mass <= 3.0:
            logger.warning(
                f"{source}: vehicle {v.name}: buoyancy is {env.density * volume / mass:.3g} times its weight "
                f"(volume {volume:g} m^3 for {mass:g} kg: a volume in litres?)"
            )


def _place_constrained(
    model: Model, q0: Array, joints: list[JointSpec], owner: dict
) -> tuple[Connection, ...]:
    """Connections kept by constraints: put each child vehicle where its connection says
    (from the parent's initial pose), so the system starts on the constraint manifold."""
    data = model.create_data()
    out = []
    for j in joints:
        child = owner[j.child]
        if "initial_pose" in child.cur:
            raise child.cur["initial_pose"].error(
                "a vehicle held by a rigid connection starts where the connection puts it"
            )
        placements(model, data, q0)
        i_p, i_c = model.body_index(j.parent), model.body_index(j.child)
        E = euler2mat(*j.rpy, axes="sxyz").T
        R_c = data.R_world[i_p] @ E.T
        s = model.q_slice(i_c)
        q0[s.start : s.start + 3] = data.p_world[i_p] + data.R_world[i_p] @ j.xyz
        q0[s.start + 3 : s.start + 7] = mat2quat(R_c)
        out.append(Connection(j.name, j.parent, j.child, E, np.asarray(j.xyz, dtype=float)))
    return tuple(out)


ZERO3 = np.zeros(3)


def _order_bodies(
    vehicles: list[VehicleSpec],
    links: dict[str, LinkSpec],
    joints: list[JointSpec],
    attached: dict[str, JointSpec],
) -> tuple[list[Body], dict[str, int]]:
    """Number the links parent-first (depth first from each free vehicle root)."""
    children: dict[str, list[JointSpec]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    order: dict[str, int] = {}
    bodies: list[Body] = []

    def add(
        link: str, parent: int, joint: Joint, j: JointSpec | None, origin: tuple = (ZERO3, ZERO3)
    ) -> None:
        stack = [(link, parent, joint, j)]
        while stack:
            name, par, jt, js = stack.pop()
            ls = links[name]
            order[name] = len(bodies)
            try:
                bodies.append(
                    Body(
                        name=name,
                        parent=par,
                        joint=jt,
                        mass=ls.mass,
                        com=ls.com,
                        inertia=ls.inertia,
                        origin_xyz=origin[0] if js is None else js.xyz,
                        origin_rpy=origin[1] if js is None else js.rpy,
                        hydro=ls.hydro,
                        joint_name=f"{name}_joint" if js is None else js.name,
                        visuals=ls.visuals,
                        collisions=ls.collisions,
                    )
                )
            except ValueError as exc:
                raise ls.cur.error(str(exc)) from None
            for cj in reversed(children.get(name, [])):
                stack.append((cj.child, order[name], _joint(cj), cj))

    for v in vehicles:
        if v.root not in attached:
            if v.base == "free":
                add(v.root, -1, Joint("free"), None)
            else:  # bolted to the world where its initial_pose puts it (a structure with joints)
                add(
                    v.root,
                    -1,
                    Joint("fixed"),
                    None,
                    (np.asarray(v.position, float), np.asarray(v.rpy, float)),
                )
    for v in vehicles:
        for ls in v.links:
            if ls.name not in order:
                raise ls.cur.error(
                    f"link {ls.name!r} is not reachable from a free vehicle root: "
                    "rigid connections form a loop"
                )
    return bodies, order


def _check_mimics(model: Model, joints: list[JointSpec]) -> None:
    """Every mimic joint follows a 1-DOF joint of the system that follows no other."""
    kinds = {b.joint_name: j for b, j in zip(model.bodies, model.joints, strict=True)}
    for js in joints:
        if js.mimic is None:
            continue
        lead = kinds.get(js.mimic[0])
        where = js.cur["mimic"]["joint"]
        if lead is None or lead.type not in ("revolute", "continuous", "prismatic"):
            one_dof = sorted(n for n, j in kinds.items() if j.nv == 1 and j.mimic is None)
            raise where.error(f"no 1-DOF joint named {js.mimic[0]!r} to mimic; 1-DOF joints are {one_dof}")
        if lead.mimic is not None or js.mimic[0] == js.name:
            raise where.error(f"joint {js.mimic[0]!r} mimics a joint itself: a mimic follows a driven joint")


def _joint(js: JointSpec) -> Joint:
    lim = js.limits
    kind = "free" if js.type == "floating" else js.type
    try:
        return Joint(
            kind,
            axis=js.axis,
            lower=lim.get("lower", -np.inf),
            upper=lim.get("upper", np.inf),
            effort_limit=lim.get("effort", np.inf),
            velocity_limit=lim.get("velocity", np.inf),
            mimic=js.mimic,
        )
    except ValueError as exc:
        raise js.cur.error(str(exc)) from None


def _initial_configuration(
    model: Model, vehicles: list[VehicleSpec], attached: dict[str, JointSpec]
) -> Array:
    q = model.neutral()
    for v in vehicles:
        i = model.body_index(v.root)
        if v.root not in attached and model.joints[i].type == "free":
            s = model.q_slice(i)
            q[s.start : s.start + 3] = v.position
            q[s.start + 3 : s.start + 7] = euler2quat(*v.rpy, axes="sxyz")
        elif v.root in attached and ("initial_pose" in v.cur):
            raise v.cur["initial_pose"].error(
                "a vehicle rigidly connected to another one has no pose of its own"
            )
        for jname, (value, cur) in v.initial_positions.items():
            hits = [k for k, b in enumerate(model.bodies) if b.joint_name == jname]
            if not hits:
                raise cur.error(f"no joint named {jname!r} in vehicle {v.name!r}")
            joint = model.joints[hits[0]]
            if joint.nq != 1:
                raise cur.error(
                    f"joint {jname!r} is {joint.type}: only 1-DOF joints take an initial position"
                )
            q[model.idx_q[hits[0]]] = value
    return q


def _check_mass_matrix(model: Model, top: Cursor) -> None:
    """The joint-space inertia must be positive definite, or ABA divides by zero."""
    if model.nv == 0:  # nothing moves (fixed bodies only)
        return
    M = crba(model, model.create_data(), model.neutral())
    ev = np.linalg.eigvalsh(M)
    if not ev.min() > 1e-12 * max(1.0, ev.max()):
        weak = [model.bodies[k].name for k in range(model.nbodies) if model.joints[k].nv]
        raise top.error(
            f"the joint-space mass matrix is singular (smallest eigenvalue {ev.min():.3g}): some joint moves "
            f"no mass or added mass; check the masses and inertias of the links below joints of {weak}"
        )
