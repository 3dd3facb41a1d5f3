"""Replay speed on a 10-minute bag: messages per second and times real time.

Records a 10-minute experiment from the simulator (BlueROV2 Heavy, a new command every
second, RC out at each change, odometry at 20 Hz: 600 + 12000 messages), then times
``replay`` on it (RK4 at 10 ms). Run: ``.venv/bin/python benchmarks/bench_replay.py [--minutes M]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from test_replay import record

from uvms_sim.replay.bag import read_bag
from uvms_sim.replay.compare import compare
from uvms_sim.replay.run import replay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    args = parser.parse_args()
    seconds = 60.0 * args.minutes
    path = Path(tempfile.mkdtemp()) / "bag"
    t0 = time.monotonic()
    system = record(path, "mcap", seconds=seconds)
    t_rec = time.monotonic() - t0
    t0 = time.monotonic()
    bag = read_bag(path)
    t_read = time.monotonic() - t0
    n = len(bag.commands.t) + len(bag.odometry.t)
    t0 = time.monotonic()
    t, predicted = replay(system, bag, dt=0.01)
    t_replay = time.monotonic() - t0
    t0 = time.monotonic()
    compare(t, predicted, bag.odometry.arrays()[1])
    t_cmp = time.monotonic() - t0
    print(f"{args.minutes:g}-minute bag ({n} messages), recorded in {t_rec:.1f} s")
    print(f"  read:    {t_read:6.2f} s ({n / t_read:8.0f} messages/s)")
    print(
        f"  replay:  {t_replay:6.2f} s ({seconds / t_replay:5.1f}x real time, {n / t_replay:6.0f} messages/s)"
    )
    print(f"  compare: {t_cmp:6.2f} s (RMSE, DTW on 1000 samples, Pearson R)")


if __name__ == "__main__":
    main()
