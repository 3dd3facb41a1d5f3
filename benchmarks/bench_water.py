"""CPU time of a BlueROV2's physics step in the working water, outside ROS: still water, the
shipped tethered description's JONSWAP sea (64 components) without its tether, and with its
50-segment Fathom tether (MoorDyn) in that sea and a 0.5 m/s current; then the tether's parts.

``Simulator.advance`` runs in groups of 5 steps of 1 ms (the node's groups between autopilot
updates at 200 Hz) or in the node's own groups (autopilot at 200 Hz and /clock at 250 Hz cut
every 20 steps into 4, 1, 3, 2, 2, 3, 1, 4), after 0.52 s of settling; µs of CPU time
(``time.process_time``) per simulated millisecond, min / median / max of ``--repeats`` runs of
``--seconds`` simulated seconds each. The parts of the tether: MoorDyn's call for one coupling
(5 ms), the water's kinematics at its 54 nodes and points (every 50 ms), and the coupling's
Python around them.

Run: ``.venv/bin/python benchmarks/bench_water.py [--seconds S] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from uvms_sim.hydro.waves import kinematics_at
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator

NODE_GROUPS = (4, 1, 3, 2, 2, 3, 1, 4)  # steps between the node's events, every 20 ms


def cpu_per_ms(sim: Simulator, seconds: float, groups: tuple[int, ...]) -> float:
    """µs of CPU per simulated millisecond of ``advance`` in ``groups`` of 1 ms steps."""
    cycles = max(1, round(seconds * 1000.0 / sum(groups)))
    start = time.process_time()
    for _ in range(cycles):
        for n in groups:
            sim.advance(0.001, n)
    return (time.process_time() - start) / (cycles * sum(groups)) * 1e6


def spread(values: list[float]) -> str:
    v = sorted(values)
    return f"{v[0]:7.1f} / {v[len(v) // 2]:7.1f} / {v[-1]:7.1f}"


def best(f: Callable[[], object], number: int, repeats: int) -> list[float]:
    """µs of CPU per call of ``f``, one value per run of ``number`` calls."""
    out = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            f()
        out.append((time.process_time() - start) / number * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per run (default 2)")
    parser.add_argument("--repeats", type=int, default=5, help="runs per case (default 5)")
    args = parser.parse_args()
    tethered = load(resolve("bluerov2_tethered"))
    cases: list[tuple[str, Callable[[], Simulator]]] = [
        ("still water", lambda: Simulator.from_system(load(resolve("bluerov2")))),
        ("JONSWAP sea, 64 components", lambda: _without_tether(tethered)),
        ("+ 50-segment tether, 0.5 m/s current", lambda: Simulator.from_system(tethered)),
    ]
    print("BlueROV2, 1 ms RK4 steps: µs of CPU per simulated ms (min / median / max of "
          f"{args.repeats} runs of {args.seconds:g} s)")  # fmt: skip
    for label, make in cases:
        for name, groups in (("groups of 5", (5,)), ("the node's groups", NODE_GROUPS)):
            runs = []
            for _ in range(args.repeats):
                sim = make()
                sim.advance(0.001, 500)
                for n in NODE_GROUPS:  # a single step too: its kernel loads on first use
                    sim.advance(0.001, n)
                runs.append(cpu_per_ms(sim, args.seconds, groups))
            median = sorted(runs)[len(runs) // 2]
            print(f"  {label:38s} {name:18s}: {spread(runs)} µs/ms  "
                  f"({1000.0 / median:5.1f}x real time per CPU second)")  # fmt: skip
    sim = Simulator.from_system(tethered)
    sim.advance(0.001, 500)
    tether = sim.tethers[0]
    line = tether.line
    _, x, v = sim.link_point(tether.body, tether.spec.position)
    clock = [sim.state.t]

    def moordyn() -> None:
        line.step(x, v, clock[0], 0.005)
        clock[0] += 0.005

    points = line.water_points()
    per_call = best(moordyn, 200, args.repeats)
    water = best(lambda: kinematics_at(sim.env.waves, points, 0.0, clock[0]), 50, args.repeats)
    print("the tether's parts (µs of CPU, min / median / max):")
    print(f"  MoorDyn's line, one 5 ms coupling ({line.spec.segments} segments): {spread(per_call)} per call "
          f"= {sorted(per_call)[len(per_call) // 2] / 5.0:5.1f} µs/ms")  # fmt: skip
    print(f"  the water's kinematics at {len(points)} nodes and points: {spread(water)} per update "
          f"(every 50 ms) = {sorted(water)[len(water) // 2] / 50.0:5.1f} µs/ms")  # fmt: skip


def _without_tether(system) -> Simulator:
    sim = Simulator.from_system(system)
    sim.attach_tethers(())
    return sim


if __name__ == "__main__":
    main()
