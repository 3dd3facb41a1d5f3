"""The shipped BlueROV2 Heavy against the real tank runs: every 12 s window replayed from the
measured state (``uvms_sim.replay.windows``), speed DTW and per-axis RMSE beside the
constant-speed and zero-speed baselines, for the shipped description and for the earlier one
(Wu's 2018 hull) and von Benzon et al.'s (2022) parameters as published, to show what the
choices of docs/validation.md change.

Run: ``.venv/bin/python benchmarks/bench_validation.py`` (part of ``make bench``); needs
``../shared/real-data/osl_train`` (skips with a message without it).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from uvms_sim.model import load
from uvms_sim.replay.sources import read_run
from uvms_sim.replay.windows import format_summary, summary, validate, with_reversed_motors

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "real-data" / "osl_train"
TANK_REVERSED = {1, 2, 5, 8}


def main() -> int:
    if not DATA.is_dir():
        print(f"bench_validation: no real data at {DATA}; skipped")
        return 0
    runs = [read_run(p) for p in sorted(DATA.glob("*.csv.gz"))]
    print(f"{len(runs)} tank runs, {sum(len(r.t) for r in runs) / 10:.0f} s of data")
    candidates = {
        "shipped bluerov2_heavy": ROOT / "config" / "bluerov2_heavy.yaml",
        "Wu 2018 hull (the former bluerov2_heavy)": ROOT / "test" / "data" / "bluerov2_heavy_wu2018.yaml",
    }
    for label, path in candidates.items():
        system = with_reversed_motors(load(path), TANK_REVERSED)
        system.environment.surface = None  # the tank's water level is not in the data
        t0 = time.perf_counter()
        s = summary(validate(system, runs))
        print(f"{label}: {format_summary(s)} [{time.perf_counter() - t0:.1f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
