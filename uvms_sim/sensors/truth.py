"""What a vehicle's sensors read, from the simulated state (pure numpy, no ROS).

- IMU: specific force ``f = a - g`` (what an accelerometer measures: at rest it reads 1 g
  *up*) and angular velocity, in the body's axes; ``a`` is the classical acceleration of the
  body origin, ``a_lin + ω × v`` from the spatial acceleration.
- Pressure: absolute pressure ``p_atm + ρ g depth`` at the body origin (a Bar30-style sensor);
  above the surface (depth < 0) it reads ``p_atm``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dynamics.kinematics import body_accelerations
from ..spatial import Array, cross

P_ATM = 101325.0  # Pa


def current_accelerations(sim, bodies: Sequence[int] | None = None) -> tuple[Array, Array]:
    """``(q̈, body accelerations)`` of a ``Simulator`` at its current state and inputs: one
    forward-dynamics call, which also leaves that state's forward pass (velocities, placements)
    in ``sim.data`` for the other sensors. With ``bodies``, the accelerations of those bodies
    at least (``body_accelerations``; the compiled path without connections, or with couplings
    that its ABA holds itself, has them all)."""
    qdd = sim.acceleration()
    fast = sim.fast_dynamics()
    if fast is not None and fast.exact_body_accelerations:  # the compiled ABA left them in data.a
        return qdd, sim.data.a.copy()
    return qdd, body_accelerations(sim.model, sim.data, qdd, bodies)


def specific_force(data, accelerations: Array, body: int, gravity: float) -> Array:
    """Accelerometer reading of body ``body`` (body axes, m/s^2)."""
    return accelerometer(data.R_world[body], data.v[body], accelerations[body], gravity)


def accelerometer(R: Array, v: Array, a: Array, gravity: float) -> Array:
    """Specific force ``a_lin + ω × v - Rᵀ g`` of a body with world rotation R (body -> world
    NED), spatial velocity v and spatial acceleration a (body axes)."""
    return a[:3] + cross(v[3:], v[:3]) - gravity * R[2]


def absolute_pressure(depth: float, density: float, gravity: float) -> float:
    """Pressure (Pa) at ``depth`` metres below the surface."""
    return P_ATM + density * gravity * max(depth, 0.0)
