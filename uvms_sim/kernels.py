"""Compile every numba kernel of ``uvms_sim.dynamics.compiled`` into numba's cache, once per
machine: ``python -m uvms_sim.kernels`` (``make setup`` runs it). A later process loads them
from the cache in about 0.3 s."""

from __future__ import annotations

import time

import numpy as np

from .dynamics.fast import BatchDynamics, JointTables
from .model import load
from .model.configs import resolve
from .simulator import fast_dynamics


def warm_up() -> None:
    """Compile (or load from the cache) every kernel on a small model with thrusters, except
    ``aba_repeat`` and ``aba_bound`` (the benchmarks' and ``FastDynamics.prepare_aba``'s),
    which compile on first use (about 1 s each)."""
    system = load(resolve("bluerov2_light_arm"))
    fast = fast_dynamics(system)
    q, v = system.initial_q, np.zeros(system.model.nv)
    fast.aba(q, v)
    fast.step(q, v, 0.01, "rk4")
    fast.step(q, v, 0.01, "semi_implicit_euler")
    fast.step_many(q, v, 0.01, 2)
    fast.step_joints(q, v, 0.01, 2, "rk4", np.zeros(system.model.nv), None, 0.0, JointTables(system.model))
    BatchDynamics(fast, 2).step(0.01)


def main() -> None:
    """Compile (or load) the kernels and say how long it took (``uvms-sim kernels``)."""
    t0 = time.perf_counter()
    print("uvms_sim: compiling the physics kernels into numba's cache (once per install)", flush=True)
    warm_up()
    print(f"uvms_sim compiled kernels ready in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
