"""Cost of rigid connections: µs per Simulator.step for Nielsen et al.'s (2016) pair as one tree (fixed
joint) and as two vehicles held by the Udwadia-Kalaba constraint, and for a three-vehicle
loop; and the constraint drift over 60 s.

Run: ``.venv/bin/python benchmarks/bench_constraints.py`` (also part of ``make bench``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from multibody_cases import case_a

from uvms_sim.model import load
from uvms_sim.simulator import Simulator


def per_step_us(sim: Simulator, dt: float, n: int = 200) -> float:
    sim.step(dt)
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step(dt)
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    print("config                         nv  step us (RK4, 20 ms)")
    for method in ("tree", "constraint"):
        path = tmp / f"{method}.yaml"
        path.write_text(case_a(2.0, damping=[5, 5, 5, 1, 1, 1], method=method))
        sim = Simulator.from_system(load(path))
        print(f"Nielsen et al. 2016 pair, {method:10s}     {sim.model.nv:3d}  {per_step_us(sim, 0.02):8.0f}")
    path = tmp / "constraint.yaml"
    sim = Simulator.from_system(load(path))
    sim.set_body_wrench("A", [2.0, 0.0, 1.0, 0.5, 0.3, 0.2])
    worst = 0.0
    for k in range(3000):
        sim.step(0.02)
        if k % 10 == 0:
            worst = max(worst, float(np.abs(sim.constraint_error()).max()))
    print(f"constraint drift over 60 s (driven, tumbling, Baumgarte α = β = 5/s, dt = 20 ms): {worst:.2e}")


if __name__ == "__main__":
    main()
