"""Nielsen et al.'s (2016) two-vehicle cases as YAML text (shared by tests and benchmarks).

The paper gives mass (20 kg), neutral buoyancy, the centre of buoyancy 0.1 m above the centre
of gravity, the rod lengths, the initial states and the surge damping values; it does not give
inertia, added mass or the other damping terms, chosen here: a 20 kg vehicle with
I = diag(0.5) kg m^2, isotropic added mass 10 kg / 0.2 kg m^2, and (when damped) linear damping.
"""

from __future__ import annotations

RHO, G = 1000.0, 9.81


def vehicle(name: str, damping: list[float] | None, x_u: float | None = None) -> str:
    d = list(damping) if damping else None
    if d is not None and x_u is not None:
        d[0] = x_u
    damp = f"\n          linear_damping: {d}" if d else ""
    return f"""
  - name: {name}
    links:
      - name: {name}
        mass: 20.0
        inertia: [0.5, 0.5, 0.5]
        hydrodynamics:
          volume: 0.02
          center_of_buoyancy: [0.0, 0.0, -0.1]
          added_mass: [10.0, 10.0, 10.0, 0.2, 0.2, 0.2]{damp}"""


def case_a(rod: float, damping: list[float] | None = None, method: str = "constraint") -> str:
    """Two vehicles on a massless rod of length ``rod`` along A's y axis, B rolled 90 deg."""
    return f"""name: nielsen2016_case_a
environment: {{gravity: {G}, water_density: {RHO}, surface: null}}
vehicles:{vehicle("A", damping)}{vehicle("B", damping)}
connections:
  - type: rigid
    method: {method}
    parent: A
    child: B
    origin: {{xyz: [0.0, {rod}, 0.0], rpy: [1.5707963267948966, 0.0, 0.0]}}
"""


def case_b(x_u_b: float, method: str = "constraint") -> str:
    """Two vehicles 1 m apart side by side (B to starboard), equal heading; B's surge damping."""
    base = [5.0, 20.0, 20.0, 2.0, 2.0, 2.0]
    return f"""name: nielsen2016_case_b
environment: {{gravity: {G}, water_density: {RHO}, surface: null}}
vehicles:{vehicle("A", base)}{vehicle("B", base, x_u_b)}
connections:
  - {{type: rigid, method: {method}, parent: A, child: B, origin: {{xyz: [0.0, 1.0, 0.0]}}}}
"""
