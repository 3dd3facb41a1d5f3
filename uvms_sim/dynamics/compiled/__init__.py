"""Compiled (numba) kernels of the hydrodynamic articulated-body algorithm and the integrators.

The same algorithms as the reference modules, term for term (but for the factor of M in the
Udwadia-Kalaba correction and the limit impacts: the tree-sparse LTL, ``crba._ltl``; for
joint couplings alone no M at all, M⁻¹ Aᵀ from the ABA's articulated quantities,
``aba._inverse_inertia``; and a gripper's couplings held inside the ABA itself,
``aba._coupled_backward``; all equal to the reference's Cholesky factor's result to rounding),
over the flat tables of
``dynamics.flat``, in modules named after the reference modules they mirror:

- ``kinematics``: joint transforms, placements and velocities (McMillan et al. 1996 eqs. A1-A5,
  9), with the biases of ``hydro`` (``hydro.forces.body_bias``, eqs. 4-10, and the cylinder drag
  of ``hydro.drag``), ``thrusters`` (Nielsen et al. 2018 eq. 12) and ``contacts``;
- ``aba``: the ABA of ``dynamics.aba`` (McMillan et al. 1996 appendix A.3) with the added mass
  inside the articulated inertia; ``crba`` and ``constraints`` (Udwadia-Kalaba);
- ``integrate``: the Runge-Kutta-Munthe-Kaas and semi-implicit Euler steps;
- ``entry``: the entry points Python calls (``dynamics.fast``), and ``touch_rows``: the rows of
  the touching pairs (``dynamics.touch``);
- below them ``spatial`` (transforms by their structure), ``rotations`` and ``buffers``.

A joint enters only through its motion subspace S in the table, except for its transform and
its configuration space (``kinematics._joint_transform``, ``integrate.integrate`` and
``_tangent_rate``). Every quantity is a scalar read from a flat table; no entry point
allocates (``step_many`` and ``batch_step`` carry their state in the workspace), which a test
counts with numba's runtime statistics. The tests hold every result equal to the reference
implementation (to 1e-10).

Compiled once per machine into numba's cache; ``make setup`` does it (``python -m
uvms_sim.kernels``). Numba keys a cached function on its own file only, so a kernel would keep
the compiled code of a callee in another file, or of ``flat``'s offsets, after they change. The
cache therefore sits in a directory named after a hash of all of these files (``cache_dir``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba

_HERE = Path(__file__).parent


def cache_dir(sources: list[Path] | None = None, name: str = "kernels") -> Path:
    """Where the kernels are cached: ``<name>-<hash of the sources>`` (by default this
    package's files and ``flat.py``) in ``NUMBA_CACHE_DIR`` if set, else in this package's
    ``__pycache__``, else (an installed package that is not writable) in the user's cache
    directory. (Another module whose kernels call kernels of other files keys its own cache on
    all of them the same way, under another ``name``: ``ros.message_kernels``.)"""
    sources = sources or sorted([*_HERE.glob("*.py"), _HERE.parent / "flat.py"])
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    if os.environ.get("NUMBA_CACHE_DIR"):
        base = Path(os.environ["NUMBA_CACHE_DIR"])
    elif os.access(_HERE, os.W_OK):
        base = _HERE / "__pycache__"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "uvms_sim"
    return base / f"{name}-{digest}"


def compiled() -> bool:
    """Whether the stepping kernel is in the cache already (else the first step compiles every
    kernel: about a minute on a 2-core machine, ``python -m uvms_sim.kernels`` does it ahead)."""
    return any(cache_dir().glob("*/entry.step-*.nbi"))


def fresh_cache_dir(sources: list[Path] | None = None, name: str = "kernels") -> Path:
    """``cache_dir(sources, name)``, with the caches of older sources under the same name
    removed when it is in this package's ``__pycache__``."""
    here = cache_dir(sources, name)
    if here.parent == _HERE / "__pycache__":
        for old in here.parent.glob(f"{name}-*"):
            if old != here:
                shutil.rmtree(old, ignore_errors=True)
    return here


def _use_cache_dir() -> str:
    """Point numba's cache at ``fresh_cache_dir()`` while the kernels are defined (numba reads
    it when a function is decorated). Returns numba's setting, to restore."""
    here = fresh_cache_dir()
    previous = numba.config.CACHE_DIR  # type: ignore[attr-defined]
    numba.config.CACHE_DIR = str(here)  # type: ignore[attr-defined]
    return previous


_previous = _use_cache_dir()
try:
    from .entry import (
        SIGNATURES,
        aba,
        aba_bound,
        aba_repeat,
        batch_step,
        closed,
        entry,
        step,
        step_joints,
        step_many,
    )
    from .touch_rows import pair_rows
finally:
    numba.config.CACHE_DIR = _previous  # type: ignore[attr-defined]

__all__ = ["SIGNATURES", "aba", "aba_bound", "aba_repeat", "batch_step", "cache_dir", "closed", "compiled",
           "entry", "fresh_cache_dir", "pair_rows", "step", "step_joints", "step_many"]  # fmt: skip
