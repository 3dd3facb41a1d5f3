"""What the Gymnasium environments accept from their caller: the constructor's arguments, the
reset's seed and options, and the actions. Anything else is a ``ValueError`` naming the
argument and what was expected; an action array is read, never written."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np

MAX_ENVS = 1_000_000  # vehicles in one batch (each holds its state, inputs and a workspace)
MAX_CONTROL_DT = 1.0  # s
MAX_SUBSTEPS = 1000  # RK4 steps in one control step
MAX_CURRENT = 10.0  # m/s, per axis: faster than the fastest tidal races
MAX_STEPS = 10**9  # control steps in an episode


def integer(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` as an int in [lo, hi] (a bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value}")
    return int(value)


def time_step(name: str, value: Any) -> float:
    """A control step in (0, MAX_CONTROL_DT] s."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < float(value) <= MAX_CONTROL_DT:
        raise ValueError(f"{name} must be a number of seconds in (0, {MAX_CONTROL_DT:g}], got {value!r}")
    return float(value)


def current(value: Any) -> np.ndarray | None:
    """None (the task's default) or 3 finite numbers (m/s, NED), each within +-MAX_CURRENT."""
    if value is None:
        return None
    try:
        c = np.asarray(value)
    except (ValueError, TypeError):  # ragged sequences
        c = np.asarray(None)
    if c.shape != (3,) or c.dtype.kind not in "iuf":
        raise ValueError(f"current must be 3 numbers (m/s, NED) or None, got {value!r}")
    c = c.astype(float)
    if not np.all(np.abs(c) <= MAX_CURRENT):  # also NaN
        raise ValueError(f"current must be finite and within +-{MAX_CURRENT:g} m/s per axis, got {value!r}")
    return c


def seed(name: str, value: Any) -> int | None:
    """None or a non-negative Python or numpy integer (as Gymnasium's seeding takes)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {value!r}")
    return int(value)


def options(value: Any) -> None:
    """The reset's options: none are defined, so None or an empty mapping."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise ValueError(f"options must be None or a dict, got {type(value).__name__}")
    if value:
        keys = ", ".join(repr(k) for k in value)
        raise ValueError(f"these environments take no reset options, got {keys}")


def actions(value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """The action(s) as a new float64 array of ``shape``; refused unless real numbers of that
    shape. NaN and infinities pass (the environment makes those commands neutral)."""
    if isinstance(value, (dict, str, bytes)) or value is None:
        raise ValueError(f"the action must be an array of shape {shape} ({what}), got {type(value).__name__}")
    try:
        a = np.array(value)  # a copy: the caller's array is never written
    except (ValueError, TypeError):  # ragged or odd sequences
        raise ValueError(
            f"the action must be an array of shape {shape} ({what}), got {value!r:.60}"
        ) from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"the action must be real numbers ({what}), got dtype {a.dtype}")
    if a.shape != shape:
        raise ValueError(f"the action must have shape {shape} ({what}), got shape {a.shape}")
    return a.astype(np.float64, copy=False)


def describe_action(nt: int, nj: int) -> str:
    joints = f" and {nj} joint effort{'s' * (nj != 1)}" if nj else ""
    return f"{nt} thruster command{'s' * (nt != 1)}{joints}"
