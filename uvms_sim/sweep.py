"""Sweeps as Ray tasks: Monte-Carlo runs of a vehicle over initial states, currents,
parameters and thruster failures, or identification over many recordings, on this machine or
on a Ray cluster (``uvms-sim sweep SPEC.yaml [--address ...]``), the results written as one
table (CSV, or Parquet for a ``.parquet`` name) with a summary.

The spec (YAML):

.. code-block:: yaml

    kind: monte_carlo                 # or identification
    description: bluerov2_heavy
    samples: 200
    seed: 0
    duration: 20.0                    # s of simulated time per sample
    dt: 0.01                          # s, RK4
    command: {forward: 0.3, lateral: 0.0, throttle: 0.0, yaw: 0.0}   # ArduSub sticks, -1..1
    vary:                             # each [low, high], drawn uniformly per sample
      surge: [-0.2, 0.2]              # initial body velocity, m/s (also sway, heave)
      current_north: [-0.3, 0.3]      # m/s (also current_east, current_down)
      damping_scale: [0.8, 1.2]       # the hull's linear and quadratic damping
      thrust_scale: [0.8, 1.0]        # every thruster's full-command thrust
      buoyancy_offset: [-2.0, 2.0]    # N, net buoyancy added
      thruster_failure: 0.05          # probability that a thruster gives nothing
    # kind: identification
    recordings: [dive1.BIN, dive2.tlog, tank/*.csv.gz]
    fit: [thrust]                     # as replay --fit
    axes: [u, v, w, r]
    reversed_motors: [1, 2, 5, 8]     # for recordings that do not record them

A Monte-Carlo row: the sample number, what was drawn, the final position (NED), the distance
from the start, the deepest point, the final speed, whether the state stayed finite, and the
Ray node that ran it. An identification row: the recording and each fitted value with its
standard error (``replay.identify``, one recording per task, no bootstrap).

Failures: each task runs once (Ray's own retries off); a task that fails (an error in it, its
worker or its node dying) is submitted again, up to ``retries`` times, and the summary says
which samples were retried (and why) and which were lost.
"""

from __future__ import annotations

import csv
import glob
import logging
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .model import ConfigError, load
from .model.configs import resolve
from .model.system import System
from .model.yaml_source import Cursor, read_yaml

KINDS = ("monte_carlo", "identification")
VARY = ("surge", "sway", "heave", "current_north", "current_east", "current_down", "damping_scale",
        "thrust_scale", "buoyancy_offset", "thruster_failure")  # fmt: skip
STICKS = ("forward", "lateral", "throttle", "yaw")


def read_spec(path: str | Path) -> dict[str, Any]:
    """The spec as plain data, checked (``ConfigError`` naming the file, line and key)."""
    path = Path(path)
    keys = ("description", "samples", "seed", "duration", "dt", "command", "vary", "recordings", "fit",
            "axes", "reversed_motors")  # fmt: skip
    cur = Cursor(read_yaml(path), path).mapping(("kind",), keys)
    kind = cur["kind"].choice(KINDS)
    spec: dict[str, Any] = {"kind": kind, "seed": cur["seed"].integer(lo=0) if "seed" in cur else 0}
    if kind == "monte_carlo":
        spec["description"] = cur["description"].text() if "description" in cur else "bluerov2_heavy"
        spec["samples"] = cur["samples"].integer(lo=1) if "samples" in cur else 100
        spec["duration"] = cur["duration"].number(positive=True) if "duration" in cur else 10.0
        spec["dt"] = cur["dt"].number(positive=True) if "dt" in cur else 0.01
        command = cur["command"].mapping(optional=STICKS) if "command" in cur else None
        spec["command"] = {
            k: (command[k].number() if command is not None and k in command else 0.0) for k in STICKS
        }
        if any(abs(v) > 1.0 for v in spec["command"].values()):
            raise cur["command"].error("the sticks are within -1..1")
        vary: dict[str, Any] = {}
        if "vary" in cur:
            v = cur["vary"].mapping(optional=VARY)
            for key in VARY:
                if key not in v:
                    continue
                if key == "thruster_failure":
                    vary[key] = v[key].number(lo=0.0)
                    if vary[key] > 1.0:
                        raise v[key].error("a probability is within 0..1")
                else:
                    lo, hi = v[key].vector(2)
                    if not lo <= hi:
                        raise v[key].error("expected [low, high] with low <= high")
                    vary[key] = (float(lo), float(hi))
        spec["vary"] = vary
        load(resolve(spec["description"]))  # a bad description is refused here, not in every task
    else:
        if "recordings" not in cur:
            raise cur.error("an identification sweep needs `recordings`")
        paths: list[str] = []
        for item in cur["recordings"].seq("a list of recordings (files or patterns)"):
            pattern = str((path.parent / item.text()) if not Path(item.text()).is_absolute() else item.text())
            found = sorted(glob.glob(pattern)) or [pattern]
            paths += found
        spec["recordings"] = paths
        spec["description"] = cur["description"].text() if "description" in cur else "bluerov2_heavy"
        spec["fit"] = [f.text() for f in cur["fit"].seq()] if "fit" in cur else []
        spec["axes"] = [a.text() for a in cur["axes"].seq()] if "axes" in cur else ["u", "v", "w", "r"]
        spec["reversed_motors"] = (
            [m.integer(lo=1) for m in cur["reversed_motors"].seq()] if "reversed_motors" in cur else None
        )
        load(resolve(spec["description"]))
    return spec


def varied_system(system: System, draw: dict[str, float]) -> System:
    """The description with the drawn damping scale, thrust scale and buoyancy offset, and the
    drawn current (``replay.identify.apply_identified`` applies them as fitted values)."""
    from .hydro.params import AXES, FORCES
    from .replay.identified import apply_identified
    from .replay.identify import BUOYANCY, THRUST_NAMES, hull_body

    hull = system.model.bodies[hull_body(system.model)].hydro
    assert hull is not None
    fitted: dict[str, tuple[float, float]] = {}
    k = draw.get("damping_scale", 1.0)
    for i, (f, a) in enumerate(zip(FORCES, AXES, strict=True)):
        fitted[f"{f}_{a}"] = (-k * float(hull.linear_damping[i, i]), 0.0)
        fitted[f"{f}_{a}{a}"] = (-k * float(hull.quadratic_damping[i]), 0.0)
    if "thrust_scale" in draw:
        s = draw["thrust_scale"]
        fitted.update({name: (s, 0.0) for name in THRUST_NAMES})
    if "buoyancy_offset" in draw:
        fitted[BUOYANCY] = (draw["buoyancy_offset"], 0.0)
    out = apply_identified(system, fitted)
    current = np.array([draw.get(f"current_{d}", 0.0) for d in ("north", "east", "down")])
    return replace(out, environment=replace(out.environment, current=current))


def monte_carlo_sample(spec: dict[str, Any], k: int) -> dict[str, Any]:
    """One Monte-Carlo sample (module doc); deterministic for (seed, k)."""
    from .actuators.ardusub import infer_frame, mix, thrust_to_pwm
    from .simulator import Simulator

    rng = np.random.default_rng([spec["seed"], k])
    draw = {key: float(rng.uniform(*span)) for key, span in spec["vary"].items() if key != "thruster_failure"}
    system = varied_system(load(resolve(spec["description"])), draw)
    sim = Simulator.from_system(system)
    bank = sim.thrusters
    if bank is None:
        raise ValueError(f"{spec['description']}: a Monte-Carlo sweep needs thrusters")
    failed = rng.uniform(size=len(bank)) < spec["vary"].get("thruster_failure", 0.0)
    v0 = sim.state.v.copy()
    v0[:3] = [draw.get("surge", 0.0), draw.get("sway", 0.0), draw.get("heave", 0.0)]
    sim.reset(sim.state.q, v0)
    frame = infer_frame(bank.motors)
    c = spec["command"]
    outputs = (
        mix(frame, 0.0, 0.0, c["yaw"], c["throttle"], c["forward"], c["lateral"], bank.motor_directions())
        if frame
        else {}
    )
    pwm = np.array([thrust_to_pwm([outputs.get(m, 0.0)])[0] if m else 1500.0 for m in bank.motors])
    pwm[failed] = 1500.0
    bank.set_pwm(pwm)
    start = sim.state.q[:3].copy()
    deepest = float(start[2])
    finite = True
    steps = max(1, round(spec["duration"] / spec["dt"]))
    try:
        for _ in range(steps // 10):
            sim.advance(spec["dt"], 10)
            deepest = max(deepest, float(sim.state.q[2]))
        if steps % 10:
            sim.advance(spec["dt"], steps % 10)
    except FloatingPointError:
        finite = False
    q, v = sim.state.q, sim.state.v
    return {
        "sample": k, **{f"drawn_{key}": value for key, value in draw.items()},
        "failed_thrusters": ";".join(name for name, f in zip(bank.names, failed, strict=True) if f),
        "final_north": float(q[0]), "final_east": float(q[1]), "final_down": float(q[2]),
        "distance": float(np.linalg.norm(q[:3] - start)), "deepest": deepest,
        "final_speed": float(np.linalg.norm(v[:3])), "finite": finite and bool(np.all(np.isfinite(q))),
    }  # fmt: skip


def identification_sample(spec: dict[str, Any], k: int) -> dict[str, Any]:
    """Identification on recording k (module doc)."""
    from .replay.identify import identify
    from .replay.sources import read_recording

    path = spec["recordings"][k]
    bag = read_recording(path)
    if spec["reversed_motors"] is not None:
        bag.reversed_motors = frozenset(spec["reversed_motors"])
    fit = set(spec["fit"])
    axes = ["uvwpqr".index(a) for a in spec["axes"]]
    system = load(resolve(spec["description"]))
    fitted = identify(system, bag, axes=axes, thrust="thrust" in fit, buoyancy="buoyancy" in fit,
                      lag="lag" in fit, delay="delay" in fit, bootstrap=0)  # fmt: skip
    row: dict[str, Any] = {"sample": k, "recording": path}
    for name, (value, se) in fitted.items():
        row[name], row[f"{name}_se"] = value, se
    row["warnings"] = " | ".join(fitted.warnings)
    return row


def _task(spec: dict[str, Any], k: int) -> dict[str, Any]:
    import ray

    row = (monte_carlo_sample if spec["kind"] == "monte_carlo" else identification_sample)(spec, k)
    row["node"] = ray.get_runtime_context().get_node_id()[:12]
    return row


@dataclass
class SweepReport:
    rows: list[dict[str, Any]]
    retried: dict[int, list[str]] = field(default_factory=dict)  # sample -> why each attempt failed
    lost: dict[int, str] = field(default_factory=dict)
    nodes: int = 0
    wall: float = 0.0


def run_sweep(
    spec: dict[str, Any], address: str | None = None, retries: int = 2, progress=None
) -> SweepReport:
    """Every sample as a Ray task (module doc); ``address`` as ``ray.init``'s (None: Ray on this
    machine, started for the sweep)."""
    import ray
    from ray.exceptions import RayError

    t0 = time.monotonic()
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, logging_level=logging.ERROR, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(max_retries=0, num_cpus=1)(_task).options(scheduling_strategy="SPREAD")
        n = spec["samples"] if spec["kind"] == "monte_carlo" else len(spec["recordings"])
        pending = {task.remote(spec, k): (k, 0) for k in range(n)}
        report = SweepReport([])
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            k, attempt = pending.pop(ready[0])
            try:
                report.rows.append(ray.get(ready[0]))
            except RayError as exc:
                why = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}"
                if attempt < retries:
                    report.retried.setdefault(k, []).append(why)
                    pending[task.remote(spec, k)] = (k, attempt + 1)
                else:
                    report.lost[k] = why
            if progress is not None:
                progress(len(report.rows), n)
        report.rows.sort(key=lambda r: r["sample"])
        report.nodes = len({r["node"] for r in report.rows})
        report.wall = time.monotonic() - t0
        return report
    finally:
        if started:
            ray.shutdown()


def write_table(rows: list[dict[str, Any]], path: str | Path) -> None:
    """CSV, or Parquet (pyarrow) for a ``.parquet`` name; one column per key of any row."""
    columns = list(dict.fromkeys(key for r in rows for key in r))
    if str(path).endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({c: [r.get(c) for r in rows] for c in columns}), str(path))
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def summary(spec: dict[str, Any], report: SweepReport) -> str:
    n = spec["samples"] if spec["kind"] == "monte_carlo" else len(spec["recordings"])
    lines = [f"{len(report.rows)} of {n} samples done on {report.nodes} Ray node(s) in {report.wall:.1f} s; "
             f"{len(report.retried)} retried, {len(report.lost)} lost"]  # fmt: skip
    for k, whys in sorted(report.retried.items()):
        lines.append(f"  retried sample {k} ({len(whys)}x): {whys[0]}")
    for k, why in sorted(report.lost.items()):
        lines.append(f"  lost sample {k}: {why}")
    numeric = [c for c in (report.rows[0] if report.rows else {}) if c not in ("sample", "node")
               and all(isinstance(r.get(c), float) and math.isfinite(r[c]) for r in report.rows)]  # fmt: skip
    for c in numeric:
        values = np.array([r[c] for r in report.rows])
        lines.append(f"  {c:28s} mean {values.mean():10.4g}  std {values.std():10.4g}  "
                     f"min {values.min():10.4g}  max {values.max():10.4g}")  # fmt: skip
    return "\n".join(lines)


__all__ = ["ConfigError", "read_spec", "run_sweep", "summary", "write_table"]
