"""What the entity services of the ``simulator`` node cost (``uvms_sim.ros.entities``, the
standard simulation interfaces over DDS): the wall time of a ``spawn_entity`` call as the number
of objects grows (each spawn builds the model again: the bodies, the contact detection's shapes,
the compiled step's tables), of ``set_entity_state``, ``get_entity_state``, ``get_entities`` and
``delete_entity``, and the simulated seconds per wall second with 0, 10 and 50 objects resting
on the seabed. Paced at real time by default (``--real-time-factor``): as fast as possible (0),
the physics thread takes the loop's lock again at once after each tick, and a service waits for
it (the calls then take several times as long).

The node runs in this process (its own executor thread) with a BlueROV2 over a plane seabed 10 m
down; the objects are 5 cm spheres of 2 kg in a grid on the seabed. Run:
``.venv/bin/python benchmarks/bench_entities.py [--objects N]`` (part of ``make bench``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))  # ros_helpers, the test's helpers

from ros_helpers import simulator, spin_until
from simulation_interfaces.msg import EntityState
from test_node_entities import ask, pose, scene_description, services

SPHERE = "{shape: sphere, size: [0.05], mass: 2.0}"


def timed(executor, clients, service: str, **fields) -> float:
    """Wall seconds of one call (the reply checked)."""
    start = time.perf_counter()
    reply = ask(executor, clients, service, **fields)
    elapsed = time.perf_counter() - start
    assert reply.result.result == 1, reply.result.error_message
    return elapsed


def real_time(executor, sim, seconds: float) -> float:
    """Simulated seconds per wall second over ``seconds`` of wall time."""
    t0, w0 = sim.sim.state.t, time.perf_counter()
    spin_until(executor, lambda: time.perf_counter() - w0 > seconds, timeout=seconds + 1.0)
    return (sim.sim.state.t - t0) / (time.perf_counter() - w0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100, help="spawn this many (at most 100)")
    parser.add_argument("--real-time-factor", type=float, default=1.0, help="the node's (0: unpaced)")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        simulator(description=scene_description(Path(tmp)), real_time_factor=args.real_time_factor) as node,
    ):
        sim, user, executor = node
        clients = services(user)
        spin_until(executor, lambda: sim.sim.state.t > 0.5, timeout=30)
        print(f"0 objects: {real_time(executor, sim, 3.0):.1f}x real time")
        spawns = []
        for k in range(args.objects):
            x, y = divmod(k, 10)
            place = pose(0.5 * x - 2.5, 0.5 * y + 2.0, -9.95)
            spawns.append(timed(executor, clients, "spawn_entity", name=f"o{k}", resource_string=SPHERE,
                                initial_pose=place))  # fmt: skip
            if k + 1 in (10, 50):
                print(f"{k + 1} objects: {real_time(executor, sim, 3.0):.1f}x real time")
        for lo, hi in ((0, 10), (40, 50), (90, 100)):
            if len(spawns) >= hi:
                median = statistics.median(spawns[lo:hi])
                print(f"spawn_entity, objects {lo}-{hi - 1} there: median {1e3 * median:.1f} ms")
        state = EntityState()
        state.header.frame_id = "odom"
        state.pose = pose(0.0, -2.0, -9.0).pose
        n = len(spawns)
        ex, cl = executor, clients
        rounds = {
            "set_entity_state": [
                timed(ex, cl, "set_entity_state", entity="o0", state=state) for _ in range(20)
            ],
            "get_entity_state": [timed(ex, cl, "get_entity_state", entity="o0") for _ in range(20)],
            "get_entities": [timed(ex, cl, "get_entities") for _ in range(20)],
            "delete_entity": [timed(ex, cl, "delete_entity", entity=f"o{k}") for k in range(n - 1, -1, -1)],
        }
        for name, times in rounds.items():
            print(f"{name} ({n} objects there at most): median {1e3 * statistics.median(times):.1f} ms")


if __name__ == "__main__":
    main()
