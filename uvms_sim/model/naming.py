"""The frame names of a system's links, shared by TF, ``robot_description`` and the views.

Each vehicle has a REP-103 ``base_link`` (FLU) and, as MAVROS does, ``base_link_frd``. A YAML
vehicle's root link is FRD: its frame is ``<root>_frd`` and ``<root>`` is the FLU frame. A
URDF vehicle already has both (``<root>_frd`` carries the floating joint, ``<root>`` is the
FLU link).
"""

from __future__ import annotations

from dataclasses import dataclass

from .system import System


@dataclass(frozen=True)
class VehicleFrames:
    """TF frame names of one vehicle (prefix included) and its root body index."""

    name: str
    root: int  # body carrying the floating joint (FRD)
    flu: str  # REP-103 base frame, e.g. "base_link"
    frd: str  # e.g. "base_link_frd"
    skip_body: int  # the URDF FLU link (published as ``flu`` itself), or -1


def tf_names(system: System, prefix: str = "") -> tuple[list[str], list[VehicleFrames]]:
    """TF frame name of every body, and the frames of every free vehicle."""
    model = system.model
    names = [prefix + b.name for b in model.bodies]
    vehicles = []
    for v in system.vehicles:
        root = model.body_index(v.root)
        if model.parents[root] >= 0 or model.joints[root].type != "free":
            continue  # held by another vehicle: its links hang from that vehicle's frames
        skip = -1
        if v.frame == "flu":
            flu_name = v.root[: -len("_frd")] if v.root.endswith("_frd") else v.root
            skip = model.body_index(flu_name)
            flu, frd = prefix + flu_name, prefix + v.root
        else:
            flu, frd = prefix + v.root, prefix + v.root + "_frd"
            names[root] = frd
        vehicles.append(VehicleFrames(v.name, root, flu, frd, skip))
    return names, vehicles
