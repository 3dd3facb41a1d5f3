"""Per-body fluid terms: hydrodynamic inertia and bias force (seed 000 eqs. 2-10)."""

from .environment import Environment
from .params import Hydrodynamics

__all__ = ["Environment", "Hydrodynamics"]
