"""The shipped BlueROV2 Heavy against the real tank runs: every 12 s window replayed from the
measured state (``uvms_sim.replay.windows``, the metric of docs/validation.md: speed DTW within
a +-0.6 s warp band, the unconstrained DTW as an extra column, per-axis RMSE, the constant- and
zero-speed baselines; in deep water, as ``uvms-sim replay --no-surface``), for the shipped
description, the earlier one (Wu's 2018 hull), von Benzon et al.'s (2022) parameters as
published (centre of buoyancy 0.01 m above the CoG, damping at the CoG), the shipped damping
centre with their BG, and the shipped description over a range of BG: the choices of
docs/validation.md and what they change.

Run: ``.venv/bin/python benchmarks/bench_validation.py`` (part of ``make bench``); needs
``../shared/real-data/osl_train`` (skips with a message without it).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from uvms_sim.model import load
from uvms_sim.model.model import Model
from uvms_sim.model.system import System
from uvms_sim.replay.sources import read_run
from uvms_sim.replay.windows import format_summary, summary, validate, with_reversed_motors

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "real-data" / "osl_train"
TANK_REVERSED = {1, 2, 5, 8}
WU2018 = "bluerov2_heavy_wu2018.yaml"


def tank_vehicle(path: Path) -> System:
    """The description with the tank vehicle's reversed motors, in deep water (the runs' z = 0
    is not the water level: docs/validation.md)."""
    system = with_reversed_motors(load(path), TANK_REVERSED)
    system.environment.surface = None
    return system


def with_hull(system: System, bg: float, damping_center_z: float | None = None) -> System:
    """The same description with its centre of buoyancy ``bg`` m above the CoG (at the origin)
    and, if given, its damping centre at that height (NED z, down positive)."""
    model = system.model
    body = model.bodies[0]
    h = body.hydro
    assert h is not None
    h = replace(h, center_of_buoyancy=np.array([0.0, 0.0, -bg]))
    if damping_center_z is not None:
        h = replace(h, damping_center=np.array([0.0, 0.0, damping_center_z]))
    bodies = [replace(body, hydro=h), *model.bodies[1:]]
    return replace(system, model=Model(bodies, name=model.name))


def main() -> int:
    if not DATA.is_dir():
        print(f"bench_validation: no real data at {DATA}; skipped")
        return 0
    runs = [read_run(p) for p in sorted(DATA.glob("*.csv.gz"))]
    print(f"{len(runs)} tank runs, {sum(len(r.t) for r in runs) / 10:.0f} s of data")
    shipped = tank_vehicle(ROOT / "config" / "bluerov2_heavy.yaml")
    candidates = {
        "shipped bluerov2_heavy": shipped,
        "von Benzon et al. 2022 as published (BG 0.01 m, damping at the CoG)": with_hull(shipped, 0.01, 0.0),
        "shipped damping centre, BG 0.01 m": with_hull(shipped, 0.01),
        **{f"shipped, BG {bg:.2f} m": with_hull(shipped, bg) for bg in (0.03, 0.05, 0.15)},
        "Wu 2018 hull (the former bluerov2_heavy)": tank_vehicle(ROOT / "test" / "data" / WU2018),
    }  # fmt: skip
    for label, system in candidates.items():
        t0 = time.perf_counter()
        s = summary(validate(system, runs))
        print(f"{label}: {format_summary(s)} [{time.perf_counter() - t0:.1f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
