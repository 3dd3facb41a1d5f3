"""A system as one URDF with visuals, the ``robot_description`` of ROS tools (RViz's robot
model, Foxglove's 3D panel): one link per TF frame, named as the simulator publishes them
(``model.naming``), so that a viewer places each link by TF.

The tree: the world frame (``odom``) at the root; each free vehicle's REP-103 ``base_link``
under it through a ``floating`` joint, ``base_link_frd`` under that (a fixed half turn about x)
and the vehicle's links from there as the description joins them (a spherical joint, which URDF
has not, is written ``floating``; a prismatic joint without limits gets +-1000 m, as URDF needs
some). A system whose root is not free hangs from the world by a fixed joint. Visuals:
``model.visual`` (the description's, else from the link's hull, drag cylinder or mass), and a
cylinder for every thruster on its link.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from .body import Body
from .naming import tf_names
from .system import System
from .visual import Visual, default_visuals, link_collisions, thruster_visual

FLU_TO_FRD_RPY = (np.pi, 0.0, 0.0)


def link_visuals(body: Body) -> tuple[Visual, ...]:
    """What a body looks like: the description's visuals, else ``default_visuals``."""
    return tuple(body.visuals) or default_visuals(body.mass, body.com, body.hydro)


def _num(x: float) -> str:
    return f"{float(x):.9g}"


def _triple(v) -> str:
    return " ".join(_num(x) for x in v)


def _visual(link: ET.Element, v: Visual, name: str, tag: str = "visual") -> None:
    el = ET.SubElement(link, tag)
    ET.SubElement(el, "origin", xyz=_triple(v.xyz), rpy=_triple(v.rpy))
    geometry = ET.SubElement(el, "geometry")
    if v.shape == "box":
        ET.SubElement(geometry, "box", size=_triple(v.size))
    elif v.shape == "cylinder":
        ET.SubElement(geometry, "cylinder", radius=_num(v.size[0]), length=_num(v.size[1]))
    elif v.shape == "sphere":
        ET.SubElement(geometry, "sphere", radius=_num(v.size[0]))
    else:
        ET.SubElement(geometry, "mesh", filename=v.mesh, scale=_triple(v.size))
    if tag != "visual":
        return
    material = ET.SubElement(el, "material", name=name)
    ET.SubElement(material, "color", rgba=_triple(v.color))


def _joint(robot: ET.Element, name: str, kind: str, parent: str, child: str, xyz, rpy) -> ET.Element:
    el = ET.SubElement(robot, "joint", name=name, type=kind)
    ET.SubElement(el, "parent", link=parent)
    ET.SubElement(el, "child", link=child)
    ET.SubElement(el, "origin", xyz=_triple(xyz), rpy=_triple(rpy))
    return el


def urdf_text(system: System, prefix: str = "", frame_id: str = "odom") -> str:
    """The URDF (module doc); ``prefix`` as the node's ``frame_prefix``, ``frame_id`` its world
    frame (prefix included)."""
    model = system.model
    names, vehicles = tf_names(system, prefix)
    robot = ET.Element("robot", name=system.name)
    links: dict[str, ET.Element] = {frame_id: ET.SubElement(robot, "link", name=frame_id)}

    def link(name: str) -> ET.Element:
        if name not in links:
            links[name] = ET.SubElement(robot, "link", name=name)
        return links[name]

    by_body: dict[int, list[Visual]] = {}
    for t in system.thrusters:
        by_body.setdefault(model.body_index(t.body), []).append(thruster_visual(t))
    for i, body in enumerate(model.bodies):
        el = link(names[i])
        for k, v in enumerate((*link_visuals(body), *by_body.get(i, []))):
            _visual(el, v, f"{names[i]}_{k}")
        for v in link_collisions(body):
            _visual(el, v, "", "collision")
    roots = {vf.root for vf in vehicles}
    flu_bodies = {vf.skip_body for vf in vehicles if vf.skip_body >= 0}
    for vf in vehicles:
        link(vf.flu)
        _joint(robot, f"{vf.flu}_floating", "floating", frame_id, vf.flu, (0, 0, 0), (0, 0, 0))
        _joint(robot, f"{vf.flu}_to_{vf.frd}", "fixed", vf.flu, vf.frd, (0, 0, 0), FLU_TO_FRD_RPY)
    for i, body in enumerate(model.bodies):
        if i in roots or i in flu_bodies:
            continue  # placed above: the vehicle's frames
        parent = frame_id if body.parent < 0 else names[body.parent]
        joint = model.joints[i]
        kind = {"free": "floating", "spherical": "floating"}.get(joint.type, joint.type)
        if kind == "revolute" and not (np.isfinite(joint.lower) and np.isfinite(joint.upper)):
            kind = "continuous"
        el = _joint(robot, body.joint_name or f"{names[i]}_joint", kind, parent, names[i], body.origin_xyz,
                    body.origin_rpy)  # fmt: skip
        if kind in ("revolute", "continuous", "prismatic"):
            ET.SubElement(el, "axis", xyz=_triple(joint.axis))
        if kind in ("revolute", "prismatic"):
            lo, hi = (
                (joint.lower, joint.upper)
                if np.isfinite(joint.lower) and np.isfinite(joint.upper)
                else (-1e3, 1e3)
            )
            effort = joint.effort_limit if np.isfinite(joint.effort_limit) else 1e6
            velocity = joint.velocity_limit if np.isfinite(joint.velocity_limit) else 1e3
            ET.SubElement(
                el, "limit", lower=_num(lo), upper=_num(hi), effort=_num(effort), velocity=_num(velocity)
            )
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
