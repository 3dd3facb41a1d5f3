"""Microseconds per call of the reference (numpy) ABA / RNEA / CRBA and RK4 step on the library
models, and per ``Simulator.step`` (compiled kernels; thrusters and per-link drag included) on
the shipped configs. The compiled dynamics beside Pinocchio and MuJoCo: ``bench_performance.py``.

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_dynamics.py [--repeat N]``.
Prints a table; McMillan et al. 1996 reports 2.6 ms per dynamics iteration of the 28-body / 45-DOF
Aquarobot on a 150 MHz R4400 (1996), printed alongside for scale.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from uvms_sim.dynamics import aba, crba, rnea, step
from uvms_sim.hydro import Environment
from uvms_sim.model import load
from uvms_sim.model.configs import shipped_configs
from uvms_sim.model.library import MODELS
from uvms_sim.simulator import Simulator


def per_call_us(fn, repeat: int) -> float:
    fn()  # warm up
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def bench_model(factory, repeat: int, env: Environment, rng: np.random.Generator) -> tuple:
    """(bodies, nv, ABA, RNEA, CRBA, RK4 step) with times in microseconds."""
    model = factory()
    data = model.create_data()
    q = model.neutral()
    v = 0.1 * rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    return (
        model.nbodies,
        model.nv,
        per_call_us(lambda: aba(model, data, q, v, tau, env), repeat),
        per_call_us(lambda: rnea(model, data, q, v, a, env), repeat),
        per_call_us(lambda: crba(model, data, q), repeat),
        per_call_us(lambda: step(model, data, q, v, tau, 0.002, env), max(1, repeat // 4)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    env = Environment(current=[0.2, 0.1, 0.0])
    rng = np.random.default_rng(0)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}")
    print("reference numpy implementation:")
    header = ("model", "bodies", "nv", "ABA us", "RNEA us", "CRBA us", "RK4 step us")
    print("{:14s} {:>6s} {:>4s} {:>9s} {:>9s} {:>9s} {:>12s}".format(*header))
    for name, factory in MODELS.items():
        row = bench_model(factory, args.repeat, env, rng)
        print("{:14s} {:6d} {:4d} {:9.0f} {:9.0f} {:9.0f} {:12.0f}".format(name, *row))
    print(
        "McMillan et al. 1996 (SGI Indigo2 R4400 150 MHz): 28 bodies / 45 DOF, 2600 us per dynamics iteration"
    )
    print()
    print("Simulator.step (compiled, RK4, dt = 2 ms), thrusters at 1600 us, current 0.2 m/s:")
    print("{:26s} {:>6s} {:>4s} {:>9s} {:>12s}".format("config", "bodies", "nv", "thrusters", "step us"))
    for name, path in shipped_configs().items():
        system = load(path)
        system.environment = env
        sim = Simulator.from_system(system)
        if sim.thrusters is not None:
            sim.set_thruster_pwm(np.full(len(sim.thrusters), 1600.0))
        state = sim.state

        def one_step(sim=sim, state=state):
            sim.state = state
            sim.step(0.002)

        us = per_call_us(one_step, max(1, args.repeat // 4))
        nthr = 0 if sim.thrusters is None else len(sim.thrusters)
        print(f"{name:26s} {system.model.nbodies:6d} {system.model.nv:4d} {nthr:9d} {us:12.0f}")


if __name__ == "__main__":
    main()
