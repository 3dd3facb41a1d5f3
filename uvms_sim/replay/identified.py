"""What an identification (``replay.identify``) changes in a description: the fitted damping,
buoyancy, thrust and lag applied to the system (``apply_identified``, which
``model.export.save_yaml`` writes as a description), or written as a YAML overlay of the
vehicle (``overlay_yaml``)."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from ..hydro.params import AXES, FORCES
from ..model.model import Model
from ..model.system import System
from .identify import BUOYANCY, LAG, THRUST_NAMES, hull_body, hydrodynamics_of


def _thruster_spec(system: System, fitted: dict) -> tuple[tuple[str, object], ...]:
    """The first vehicle's ``thruster_model`` with the fitted full-command thrusts and lag."""
    from ..actuators.thruster import thruster_model

    spec = dict(system.vehicles[0].thruster_model)
    kind = thruster_model(spec)
    if THRUST_NAMES[0] in fitted:
        k_f, k_r, k_nu = (fitted[name][0] for name in THRUST_NAMES)
        spec["thrust_forward"] = round(kind.thrust_forward * k_f, 4)
        spec["thrust_reverse"] = round(kind.thrust_reverse * k_r, 4)
        # T_nu = -T_nn⁺ / (J0 D): scaling T_nn⁺ by k_f and T_nu by k_nu moves J0 to J0 k_f / k_nu
        if k_nu > 0.0:
            spec["zero_thrust_advance_ratio"] = round(kind.zero_thrust_advance_ratio * k_f / k_nu, 4)
    if LAG in fitted:
        spec["time_constant"] = round(fitted[LAG][0], 4)
    return tuple(spec.items())


def apply_identified(system: System, fitted: dict) -> System:
    """The system with the fitted damping (and buoyancy offset, as displaced volume at the
    same centre of buoyancy) in its hull and, if fitted, the scaled thrusts and the lag in its
    first vehicle's thruster model (``model.export.save_yaml`` writes it as a description).
    A fitted ``command_delay`` belongs to the recording, not the vehicle: it is not applied.
    Estimates that the fit refused (``Identification.refused``: on a bound or a grid end, not
    separable) are not applied either: the described values stay."""
    refused = getattr(fitted, "refused", {})
    fitted = {k: v for k, v in fitted.items() if k not in refused}
    model = system.model
    hull = hull_body(model)
    b = model.bodies[hull]
    h = hydrodynamics_of(b)
    lin, quad = h.linear_damping.copy(), h.quadratic_damping.copy()
    for i, (f, a) in enumerate(zip(FORCES, AXES, strict=True)):
        if f"{f}_{a}" in fitted:
            lin[i, i] = -fitted[f"{f}_{a}"][0]
        if f"{f}_{a}{a}" in fitted:
            quad[i] = -fitted[f"{f}_{a}{a}"][0]
    volume = h.volume
    if BUOYANCY in fitted:
        env = system.environment
        volume = max(0.0, volume + fitted[BUOYANCY][0] / (env.density * env.gravity))
    bodies = list(model.bodies)
    bodies[hull] = replace(b, hydro=replace(h, linear_damping=lin, quadratic_damping=quad, volume=volume))
    vehicles = list(system.vehicles)
    if (THRUST_NAMES[0] in fitted or LAG in fitted) and vehicles:
        vehicles[0] = replace(vehicles[0], thruster_model=_thruster_spec(system, fitted))
    return replace(system, model=Model(bodies, name=model.name), vehicles=tuple(vehicles))


def overlay_yaml(system: System, fitted: dict) -> str:
    """A YAML overlay for the vehicle: the hull's ``hydrodynamics`` block of
    ``apply_identified`` (the fitted damping, the other terms as described) and, if thrust
    scales or the lag were fitted, its ``thruster_model``. Its keys are those of a ``vehicles[]`` entry
    (or of ``load(urdf, overlay=...)``'s file for the hydrodynamics)."""
    import yaml

    from ..model.export import _hydro

    identified = apply_identified(system, fitted)
    model = identified.model
    hull = model.bodies[hull_body(model)]
    h = hydrodynamics_of(hull)
    block = _hydro(h)
    names = list(enumerate(zip(FORCES, AXES, strict=True)))
    block["linear_damping"] = {f"{f}_{a}": -float(h.linear_damping[k, k]) for k, (f, a) in names}
    block["quadratic_damping"] = {f"{f}_{a}{a}": -float(h.quadratic_damping[k]) for k, (f, a) in names}
    out: dict = {"hydrodynamics": {hull.name: block}}
    if (THRUST_NAMES[0] in fitted or LAG in fitted) and identified.vehicles:
        spec = identified.vehicles[0].thruster_model
        out["thruster_model"] = {k: (str(v) if k == "preset" else float(cast(float, v))) for k, v in spec}
    return yaml.safe_dump(out, sort_keys=False)
