"""Dynamics speed beside Pinocchio and MuJoCo, batch throughput, node real-time factor and
replay throughput (issue 11), as one table; ``--write FILE`` also writes it as Markdown with
the machine described (``benchmarks/RESULTS.md`` is kept in the repository).

Per model, microseconds per call from Python (best of 5 runs):

- ``ABA``: ``FastDynamics.aba`` (compiled: hydrodynamic ABA with added mass, damping,
  buoyancy, current, per-link drag and thrust); ``prepared ABA``: the same through
  ``FastDynamics.prepare_aba`` (bound to the caller's arrays, as ``pinocchio.aba`` is to its
  model and data) and, in brackets, the same loop run inside compiled code (the cost without
  the Python call); ``numpy ABA``: the reference implementation; ``Pinocchio ABA``:
  ``pinocchio.aba`` (C++, rigid bodies only).
- ``step``: ``Simulator.step`` with thrusters at 1600 us and a 0.2 m/s current: RK4 (four
  derivative evaluations; in brackets one step inside compiled code, ``step_many``) and
  semi-implicit Euler (one); MuJoCo's ``mj_step`` with its fluid model, RK4 (four
  evaluations) and Euler (one).
- the contact scene (``--grasp``: only it): ``Simulator.advance`` of
  ``config/bluerov2_heavy_alpha5_grasp.yaml`` at 1 kHz beside ``mj_step`` of the same bodies
  (``grasp_mjcf``), the ratio printed.

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_performance.py [--quick] [--write F]``.
Needs the benchmark-only peers of ``benchmarks/requirements.txt``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dynamics import per_call_us
from peers import to_mjcf, to_mujoco, to_pinocchio

from uvms_sim.dynamics import aba
from uvms_sim.dynamics.fast import BatchDynamics
from uvms_sim.hydro import Environment
from uvms_sim.model import load
from uvms_sim.simulator import Simulator, fast_dynamics

CONFIG = Path(__file__).resolve().parents[1] / "config"

MODELS = {
    "BlueROV2": "bluerov2",
    "BlueROV2 + 4-joint arm": "bluerov2_light_arm",
    "León-González et al. 2024 Heavy + 4 arms": "heavy_four_arms",
    "walker (McMillan et al. 1996)": "walker",
    "2 connected vehicles (tree)": "bluerov1_pair",
}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import mujoco
    import numba
    import pinocchio

    return (
        f"{cpu}, {os.cpu_count()} cores, {platform.machine()}, Linux {platform.release()}; "
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"Pinocchio {pinocchio.__version__}, MuJoCo {mujoco.__version__}"
    )


def model_row(label: str, name: str, env: Environment, rng, repeat: int) -> tuple:
    """One row of the dynamics table (see the module docstring)."""
    import mujoco
    import pinocchio as pin

    system = load(CONFIG / f"{name}.yaml")
    system.environment = env
    model = system.model
    sim = Simulator.from_system(system)
    if sim.thrusters is not None:
        sim.set_thruster_pwm(np.full(len(sim.thrusters), 1600.0))
        sim.thrusters.advance(1.0)
    fast = sim.fast_dynamics()
    q, v = system.initial_q, 0.1 * rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    ours = per_call_us(lambda: fast.aba(q, v, tau), repeat)
    prepared = per_call_us(fast.prepare_aba(q, v, tau), repeat)
    inner = per_call_us(lambda: fast.aba_repeat(q, v, repeat, tau), 1) / repeat
    data = model.create_data()
    wrench = sim.thrusters.wrenches if sim.thrusters is not None else None
    reference = per_call_us(lambda: aba(model, data, q, v, tau, env, wrench), max(1, repeat // 50))
    pm = to_pinocchio(model)
    pd = pm.createData()
    pq, pv, ptau = pin.neutral(pm), 0.1 * np.ones(pm.nv), np.zeros(pm.nv)
    pin_us = per_call_us(lambda: pin.aba(pm, pd, pq, pv, ptau), repeat)
    state = sim.state

    def one_step():
        sim.state = state
        sim.step(0.002)

    rk4 = per_call_us(one_step, repeat // 2)
    rk4_inner = per_call_us(lambda: fast.step_many(state.q, state.v, 0.002, repeat, tau=sim.tau), 1) / repeat
    sim.method = "semi_implicit_euler"
    euler = per_call_us(one_step, repeat)
    sim.method = "rk4"
    mm, md = to_mujoco(model)
    mj_euler = per_call_us(lambda: mujoco.mj_step(mm, md), repeat)
    mm4, md4 = to_mujoco(model, integrator="RK4")
    mj_rk4 = per_call_us(lambda: mujoco.mj_step(mm4, md4), repeat // 2)
    return (label, model.nbodies, model.nv, ours, prepared, inner, reference, pin_us, rk4, rk4_inner, euler,
            mj_euler, mj_rk4)  # fmt: skip


def dynamics_rows(repeat: int) -> list[tuple]:
    env = Environment(current=[0.2, 0.1, 0.0])
    rng = np.random.default_rng(0)
    return [model_row(label, name, env, rng, repeat) for label, name in MODELS.items()]


def connected_rows(repeat: int) -> list[tuple]:
    """us per RK4 step (2 ms) of Nielsen et al.'s (2016) pair (case A): one tree with a fixed joint, and two
    floating vehicles held by the Udwadia-Kalaba connection (compiled, and the reference)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
    from multibody_cases import case_a

    rows = []
    tmp = Path(tempfile.mkdtemp())
    for method, compiled in (("tree", True), ("constraint", True), ("constraint", False)):
        path = tmp / f"{method}.yaml"
        path.write_text(case_a(2.0, damping=[5, 5, 5, 1, 1, 1], method=method))
        sim = Simulator.from_system(load(path))
        sim.compiled = compiled
        state = sim.state

        def one_step(sim=sim, state=state):
            sim.state = state
            sim.step(0.002)

        label = method if compiled else f"{method}, reference numpy path"
        rows.append((label, sim.model.nv, per_call_us(one_step, max(1, repeat // (10 if compiled else 100)))))
    return rows


def batch_rows(seconds: float) -> list[tuple]:
    """Vehicle-steps per second of ``BatchDynamics`` (BlueROV2, thrusters on, RK4 at 10 ms)."""
    system = load(CONFIG / "bluerov2.yaml")
    fast = fast_dynamics(system)
    rows = []
    for n in (1, 100, 10000):
        batch = BatchDynamics(fast, n, system.initial_q)
        batch.n[:] = 20.0
        batch.step(0.01, 1)
        steps = 1
        while True:
            t0 = time.perf_counter()
            batch.step(0.01, steps)
            wall = time.perf_counter() - t0
            if wall > seconds or steps > 1e6:
                break
            steps *= 4
        rows.append((n, n * steps / wall, wall / (n * steps) * 1e6, bool(batch.ok.all())))
    return rows


def node_rows(seconds: float) -> list[tuple]:
    import rclpy
    from bench_node import measure

    rclpy.init()
    node = rclpy.create_node("bench_performance")
    rows = []
    try:
        for label, extra in (
            ("BlueROV2, MAVROS/ArduSub shim", ()),
            ("BlueROV2, no shim", ("-p", "ardusub_frame:=none")),
            ("Heavy + 4 arms, MAVROS/ArduSub shim", ("-p", "description:=heavy_four_arms")),
        ):
            for listen in (False, True):
                rss: list = []
                rtf, cpu = measure(0.0, seconds, node, 1000.0, extra, listen, rss)
                first, last = rss[0][1], rss[-1][1]
                rows.append(
                    (label, "odom, imu, tf, mavros pose" if listen else "none", rtf, cpu, first, last)
                )
    finally:
        node.destroy_node()
        rclpy.shutdown()
    return rows


STARTUP = """
import time
t0 = time.perf_counter()
import uvms_sim
from uvms_sim.model import load
from uvms_sim.model.configs import resolve
from uvms_sim.simulator import Simulator
sim = Simulator.from_system(load(resolve("bluerov2")))
sim.step(0.01)
print(time.perf_counter() - t0)
"""


def startup_rows(compile_too: bool) -> list[tuple[str, float]]:
    """Seconds from ``import uvms_sim`` to the end of a BlueROV2's first step in a new process
    (kernels in the cache; best of 3), and with ``compile_too`` the time of
    ``python -m uvms_sim.kernels`` into an empty cache (what ``make setup`` pays once)."""
    first = min(float(subprocess.check_output([sys.executable, "-c", STARTUP], text=True)) for _ in range(3))
    rows = [("first step of a new process after import uvms_sim", first)]
    if compile_too:
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            cmd = [sys.executable, "-m", "uvms_sim.kernels"]
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            rows.append(("compiling every kernel into an empty cache", time.perf_counter() - t0))
    return rows


def replay_row(minutes: float) -> tuple:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
    from test_replay import record

    from uvms_sim.replay.bag import read_bag
    from uvms_sim.replay.run import replay

    path = Path(tempfile.mkdtemp()) / "bag"
    system = record(path, "mcap", seconds=60.0 * minutes)
    bag = read_bag(path)
    n = len(bag.commands.t) + len(bag.odometry.t)
    t0 = time.perf_counter()
    replay(system, bag, dt=0.01)
    wall = time.perf_counter() - t0
    return minutes, n, 60.0 * minutes / wall, n / wall


GRASP = "bluerov2_heavy_alpha5_grasp"
_FLOOR_GROUP = 'contype="1" conaffinity="3"'  # as the objects (peers._GROUPS): touches everything


def grasp_mjcf(system, timestep: float = 0.001, integrator: str = "Euler") -> str:
    """The grasp scene (``config/bluerov2_heavy_alpha5_grasp.yaml``) for MuJoCo: the same
    bodies, joints and collision shapes (``peers.to_mjcf``), the heightmap as a height field,
    MuJoCo's fluid model for the water, and in NED (MuJoCo is indifferent to which way is up:
    gravity along +z, the height field turned over about x so that its solid lies below)."""
    seabed = system.scene.seabed
    depths = np.asarray(seabed.depths, dtype=float)  # [i][j]: x = origin_x + i s, y = origin_y + j s
    n, m = depths.shape
    lo, hi = float(depths.min()), float(depths.max())
    # turned over about x: local x = x, local y = -y, local up = -z; rows run along local y
    # from -size_y, columns along local x
    rows = [[(hi - depths[i, m - 1 - r]) for i in range(n)] for r in range(m)]
    elevation = " ".join(f"{e:.6g}" for row in rows for e in row)
    sx, sy = 0.5 * (n - 1) * seabed.spacing, 0.5 * (m - 1) * seabed.spacing
    cx, cy = seabed.origin[0] + sx, seabed.origin[1] + sy  # the grid's centre (NED)
    size = f"{sx} {sy} {max(hi - lo, 1e-3)} 0.1"
    assets = f'<hfield name="seabed" nrow="{m}" ncol="{n}" size="{size}" elevation="{elevation}"/>'
    world = f'<geom type="hfield" hfield="seabed" pos="{cx} {cy} {hi}" quat="0 1 0 0" {_FLOOR_GROUP}/>'
    objects = frozenset(v.name for v in system.vehicles if v.kind == "object")
    return to_mjcf(
        system.model, timestep, integrator, collisions=True, world=world, assets=assets,
        gravity=f"0 0 {system.environment.gravity}", objects=objects,
    )  # fmt: skip


def grasp_rows(seconds: float) -> list[tuple]:
    """us per 1 ms step of the grasp scene: ``Simulator.advance`` (RK4; the detection's share
    measured around ``Touch.detect``) and MuJoCo's ``mj_step`` (Euler and RK4) of the same
    bodies, each after 0.5 s of settling; with the touching pairs (ours) or contacts (MuJoCo)."""
    import mujoco

    system = load(CONFIG / f"{GRASP}.yaml")
    sim = Simulator.from_system(system)
    spent = [0.0]
    detect = sim.touch.detect

    def timed(*args):
        t0 = time.perf_counter()
        out = detect(*args)
        spent[0] += time.perf_counter() - t0
        return out

    sim.touch.detect = timed  # type: ignore[method-assign]
    sim.advance(0.001, 500)
    steps = max(100, round(seconds * 1000))
    spent[0] = 0.0
    t0 = time.perf_counter()
    sim.advance(0.001, steps)
    ours = (time.perf_counter() - t0) / steps * 1e6
    rows = [("uvms_sim Simulator.advance, RK4", ours, spent[0] / steps * 1e6, sim.touch.pairs_touching)]
    model = system.model
    for integrator in ("Euler", "RK4"):
        mm = mujoco.MjModel.from_xml_string(grasp_mjcf(system, integrator=integrator))
        md = mujoco.MjData(mm)
        q0 = system.initial_q
        for i in range(model.nbodies):
            jid = mm.body(f"b{i}").jntadr[0]
            if jid < 0:
                continue
            a, nq = mm.jnt_qposadr[jid], {0: 7, 1: 4, 2: 1, 3: 1}[int(mm.jnt_type[jid])]
            md.qpos[a : a + nq] = q0[model.idx_q[i] : model.idx_q[i] + nq]
        mujoco.mj_forward(mm, md)
        for _ in range(500):
            mujoco.mj_step(mm, md)
        t0 = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(mm, md)
        us = (time.perf_counter() - t0) / steps * 1e6
        rows.append((f"MuJoCo mj_step, {integrator}", us, float("nan"), int(md.ncon)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, shorter runs")
    parser.add_argument("--write", help="also write the results as Markdown to this file")
    parser.add_argument("--no-node", action="store_true", help="skip the node measurement")
    parser.add_argument("--grasp", action="store_true", help="only the grasp scene beside MuJoCo")
    args = parser.parse_args()
    repeat = 400 if args.quick else 2000
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    def grasp_table() -> None:
        scene = f"{GRASP}.yaml: the Heavy, the Alpha 5, 10 objects on a heightmap"
        emit(f"Contact scene ({scene}), us per 1 ms step")
        emit()
        emit("| simulator | us per step | of which detection (Python, coal) | touching pairs / contacts |")
        emit("|---|---|---|---|")
        rows = grasp_rows(1.0 if args.quick else 3.0)
        for label, us, detect_us, n in rows:
            share = "" if math.isnan(detect_us) else f"{detect_us:.0f}"
            emit(f"| {label} | {us:.0f} | {share} | {n} |")
        ours = rows[0][1]
        emit()
        ratio = f"{ours / rows[1][1]:.1f}x; vs MuJoCo RK4: {ours / rows[2][1]:.1f}x"
        emit(f"uvms_sim RK4 vs MuJoCo Euler: {ratio}")

    if args.grasp:
        grasp_table()
        return

    emit(f"machine: {machine()}")
    emit()
    emit("Dynamics, microseconds per call from Python")
    emit("(in brackets: the same call inside compiled code, without crossing from Python)")
    emit()
    emit(
        "| model | bodies | nv | ABA | prepared ABA | numpy ABA | Pinocchio ABA | prepared vs Pinocchio "
        "| RK4 step | MuJoCo RK4 step | RK4 vs MuJoCo | Euler step | MuJoCo Euler step |"
    )
    emit("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in dynamics_rows(repeat):
        label, nb, nv, ours, prep, inner, ref, pin_us, rk4, rk4_in, euler, mj_e, mj_r = row
        emit(
            f"| {label} | {nb} | {nv} | {ours:.1f} | {prep:.1f} ({inner:.1f}) | {ref:.0f} | {pin_us:.1f} "
            f"| {prep / pin_us:.1f}x | {rk4:.1f} ({rk4_in:.1f}) | {mj_r:.1f} | {rk4 / mj_r:.2f} "
            f"| {euler:.1f} | {mj_e:.1f} |"
        )
    emit()
    emit("Nielsen et al.'s (2016) connected pair, us per RK4 step (2 ms):")
    emit()
    for method, nv, us in connected_rows(repeat):
        emit(f"- {method} (nv = {nv}): {us:.0f} us")
    emit("McMillan et al. 1996 (SGI Indigo2 R4400 150 MHz): 2600 us per dynamics iteration, 28-body walker")
    emit()
    grasp_table()
    emit()
    emit("Batch mode (BatchDynamics: N BlueROV2 copies, thrusters on, RK4 at 10 ms, split over the cores)")
    emit()
    emit("| N | vehicle-steps per second | us per vehicle-step |")
    emit("|---|---|---|")
    for n, rate, us, ok in batch_rows(0.5 if args.quick else 2.0):
        assert ok
        emit(f"| {n} | {rate:,.0f} | {us:.2f} |")
    if not args.no_node:
        emit()
        emit("Node (own process), use_sim_time, 1 kHz physics, 50 Hz publishing, as fast as possible")
        emit()
        emit("(/clock is sampled at the ends of the window, not subscribed throughout: bench_node.py)")
        emit()
        emit(
            "| configuration | subscribed by the benchmark | real-time factor | node CPU (% of one core) "
            "| node RSS, start -> end of the window (MB) |"
        )
        emit("|---|---|---|---|---|")
        for label, listened, rtf, cpu, rss0, rss1 in node_rows(5.0 if args.quick else 10.0):
            emit(f"| {label} | {listened} | {rtf:.1f}x | {cpu:.0f} | {rss0:.0f} -> {rss1:.0f} |")
    emit()
    for label, seconds in startup_rows(not args.quick):
        emit(f"Startup: {label}: {seconds:.2f} s")
    emit()
    minutes, n, xrt, rate = replay_row(2.0 if args.quick else 10.0)
    what = f"{minutes:g}-minute bag ({n} messages), RK4 at 10 ms"
    emit(f"Replay: {what}: {xrt:.0f}x real time, {rate:,.0f} messages/s")
    if args.write:
        stamp = time.strftime("%Y-%m-%d")
        head = [
            "# Benchmark results",
            "",
            f"Written by `benchmarks/bench_performance.py --write` on {stamp}. Timings on this shared",
            "2-core machine vary by about 30 % from run to run; ratios within one run are steadier.",
            "",
        ]
        Path(args.write).write_text("\n".join(head + out) + "\n")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
