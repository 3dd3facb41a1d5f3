"""Algorithms over (model, data) with forces: ABA, RNEA, the forward pass with the hydrodynamic
bias, integration, energy/momentum, constraints, contacts (CRBA and placements live in
``uvms_sim.model``, below; ``crba`` is re-exported here)."""

from ..model.crba import crba
from .aba import aba
from .integrate import NonFiniteStateError, integrate, normalize, step, step_rk4, step_semi_implicit_euler
from .kinematics import forward_kinematics
from .quantities import kinetic_energy, momentum_world
from .rnea import nonlinear_effects, rnea

__all__ = [
    "NonFiniteStateError",
    "aba",
    "crba",
    "forward_kinematics",
    "integrate",
    "kinetic_energy",
    "momentum_world",
    "nonlinear_effects",
    "normalize",
    "rnea",
    "step",
    "step_rk4",
    "step_semi_implicit_euler",
]
