"""Sweeps as Ray tasks: Monte-Carlo runs of a vehicle over initial states, currents,
parameters and thruster failures, or identification over many recordings, on this machine or
on a Ray cluster (``uvms-sim sweep SPEC.yaml [--address ...]``), the results written as one
table (CSV, or Parquet for a ``.parquet`` name) with a summary.

The spec (YAML):

.. code-block:: yaml

    kind: monte_carlo                 # or identification
    description: bluerov2_heavy       # a shipped name, or a file (relative: to the spec's folder)
    samples: 200                      # 1 .. 1 000 000
    seed: 0
    duration: 20.0                    # s of simulated time per sample, up to 86 400 (a day)
    dt: 0.01                          # s, RK4, 1e-5 .. 0.1 (and duration / dt <= 1e8 steps)
    command: {forward: 0.3, lateral: 0.0, throttle: 0.0, yaw: 0.0}   # ArduSub sticks, -1..1
    vary:                             # each [low, high], drawn uniformly per sample
      surge: [-0.2, 0.2]              # initial body velocity, m/s, within +-10 (also sway, heave)
      current_north: [-0.3, 0.3]      # m/s within +-10 (also current_east, current_down)
      damping_scale: [0.8, 1.2]       # the hull's linear and quadratic damping, 0..100
      thrust_scale: [0.8, 1.0]        # every thruster's full-command thrust, 0..10
      buoyancy_offset: [-2.0, 2.0]    # N, net buoyancy added, within +-1000
      thruster_failure: 0.05          # probability that a thruster gives nothing
    # kind: identification
    recordings: [dive1.BIN, dive2.tlog, tank/*.csv.gz]   # relative: to the spec's folder
    fit: [thrust]                     # some of thrust, buoyancy, lag, delay (as replay --fit)
    axes: [u, v, w, r]                # damping axes, of u v w p q r
    reversed_motors: [1, 2, 5, 8]     # for recordings that do not record them

Every key is checked before Ray starts (``read_spec``): an unknown key, a key of the other kind
of sweep, an unknown fit or axis, a motor the description does not number, a recording that is
not there, a number out of its range, a description without thrusters are each a one-line
``ConfigError`` naming the spec file, the line and the key.

A Monte-Carlo row: the sample number, what was drawn, the final position (NED), the distance
from the start, the deepest point, the final speed, whether the state stayed finite, and the
Ray node that ran it. An identification row: the recording and each fitted value with its
standard error (``replay.identify``, one recording per task, no bootstrap).

Failures: each task runs once (Ray's own retries off). A sample that raises an error is lost
at once (it would raise again); one whose worker or node died is submitted again, up to
``retries`` times. The summary says which samples were retried (and why), which were lost and
which did not stay finite; ``failure`` says when the sweep as a whole failed (a sample lost, or
no Monte-Carlo sample that stayed finite), and the command then exits 1 after writing the
table of the others. ``connect`` joins a cluster within a time limit.
"""

from __future__ import annotations

import csv
import functools
import glob
import logging
import math
import time
from collections.abc import Callable
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
FITS = ("thrust", "buoyancy", "lag", "delay")  # as ``replay --fit``; the damping is always fitted
AXES = "uvwpqr"
COMMON = ("kind", "description", "seed")
KEYS = {
    "monte_carlo": ("samples", "duration", "dt", "command", "vary"),
    "identification": ("recordings", "fit", "axes", "reversed_motors"),
}
# the limits of a spec (module doc)
MAX_SAMPLES = 1_000_000
MAX_DURATION = 86_400.0  # s of simulated time per sample: a day
DT_RANGE = (1.0e-5, 0.1)  # s, the RK4 step
MAX_STEPS = 10**8  # RK4 steps per sample (duration / dt)
MAX_RECORDINGS = 10_000
MAX_SEED = 2**64 - 1
# each drawn quantity's physical range: [low, high] must lie within it
VARY_RANGE = {
    "surge": (-10.0, 10.0), "sway": (-10.0, 10.0), "heave": (-10.0, 10.0),  # m/s
    "current_north": (-10.0, 10.0), "current_east": (-10.0, 10.0), "current_down": (-10.0, 10.0),
    "damping_scale": (0.0, 100.0), "thrust_scale": (0.0, 10.0),
    "buoyancy_offset": (-1000.0, 1000.0),  # N
}  # fmt: skip


def read_spec(path: str | Path) -> dict[str, Any]:
    """The spec as plain data, checked: anything wrong is a ``ConfigError`` naming the spec file,
    the line and the key (module doc)."""
    path = Path(path)
    cur = Cursor(read_yaml(path), path)
    if not isinstance(cur.value, dict) or "kind" not in cur:
        cur.mapping(("kind",), COMMON[1:] + KEYS["monte_carlo"] + KEYS["identification"])
    kind = cur["kind"].choice(KINDS)
    other = next(k for k in KINDS if k != kind)
    for key in cur.value:
        if key in KEYS[other]:
            raise cur[key].error(f"a key of {other} sweeps; this spec is kind: {kind}")
    cur.mapping(("kind",), COMMON[1:] + KEYS[kind])
    spec: dict[str, Any] = {"kind": kind, "seed": _integer(cur, "seed", 0, MAX_SEED, 0)}
    (_monte_carlo if kind == "monte_carlo" else _identification)(cur, spec)
    # last, the description (loading it is the slow part) and what depends on it
    description = cur["description"] if "description" in cur else None
    spec["description"], system = _description(description, path)
    from .actuators.ardusub import infer_frame
    from .actuators.bank import thruster_bank

    bank = thruster_bank(system)
    if bank is None:
        raise (description or cur).error(f"{system.name} has no thrusters: this sweep needs some")
    if kind == "monte_carlo" and any(spec["command"].values()) and infer_frame(bank.motors) is None:
        raise (description or cur).error(
            f"{system.name}: the sticks (command) need an ArduSub frame: thrusters numbered as motors "
            "1-6 or 1-8"
        )
    if kind == "identification" and "reversed_motors" in cur:
        motors = {m for m in bank.motors if m is not None}
        for item, m in zip(cur["reversed_motors"].seq(), spec["reversed_motors"], strict=True):
            if m not in motors:
                raise item.error(f"motor {m} is not one of {system.name}'s motors {sorted(motors)}")
    return spec


def _monte_carlo(cur: Cursor, spec: dict[str, Any]) -> None:
    spec["samples"] = _integer(cur, "samples", 1, MAX_SAMPLES, 100)
    spec["duration"] = _number(cur, "duration", 0.0, MAX_DURATION, 10.0, "s")
    spec["dt"] = _number(cur, "dt", *DT_RANGE, 0.01, "s", closed=True)
    if spec["duration"] / spec["dt"] > MAX_STEPS:
        raise (cur["duration"] if "duration" in cur else cur["dt"]).error(
            f"duration / dt is {spec['duration'] / spec['dt']:.3g} RK4 steps per sample "
            f"(at most {MAX_STEPS:.0e})"
        )
    command = cur["command"].mapping(optional=STICKS) if "command" in cur else None
    spec["command"] = {
        k: _number(command, k, -1.0, 1.0, 0.0, "", closed=True) if command else 0.0 for k in STICKS
    }
    spec["vary"] = _vary(cur["vary"]) if "vary" in cur else {}


def _identification(cur: Cursor, spec: dict[str, Any]) -> None:
    if "recordings" not in cur:
        raise cur.error("an identification sweep needs `recordings`")
    spec["recordings"] = _recordings(cur["recordings"], Path(cur.file))
    spec["fit"] = _names(cur["fit"], FITS, "fit") if "fit" in cur else []
    spec["axes"] = _names(cur["axes"], tuple(AXES), "axes") if "axes" in cur else ["u", "v", "w", "r"]
    if not spec["axes"]:
        raise cur["axes"].error("expected at least one of u, v, w, p, q, r")
    spec["reversed_motors"] = None
    if "reversed_motors" in cur:
        spec["reversed_motors"] = []
        for item in cur["reversed_motors"].seq("a list of motor numbers"):
            m = item.integer(lo=1)
            if m in spec["reversed_motors"]:
                raise item.error(f"motor {m} is listed twice")
            spec["reversed_motors"].append(m)


def _integer(cur: Cursor, key: str, lo: int, hi: int, default: int) -> int:
    if key not in cur:
        return default
    value = cur[key].integer(lo=lo)
    if value > hi:
        raise cur[key].error(f"expected an integer <= {hi:.3g}, got {value:.3g}")
    return value


def _number(
    cur: Cursor, key: str, lo: float, hi: float, default: float, unit: str, closed: bool = False
) -> float:
    """A number in (lo, hi] (or [lo, hi] when ``closed``)."""
    if key not in cur:
        return default
    value = cur[key].number()
    if not (lo <= value <= hi if closed else lo < value <= hi):
        span = f"{'[' if closed else '('}{lo:g}, {hi:g}] {unit}".rstrip()
        raise cur[key].error(f"expected a number in {span}, got {value:g}")
    return value


def _vary(cur: Cursor) -> dict[str, Any]:
    v = cur.mapping(optional=VARY)
    vary: dict[str, Any] = {}
    for key in VARY:
        if key not in v:
            continue
        if key == "thruster_failure":
            vary[key] = v[key].number(lo=0.0)
            if vary[key] > 1.0:
                raise v[key].error("a probability is within 0..1")
            continue
        lo, hi = v[key].vector(2)
        if not lo <= hi:
            raise v[key].error("expected [low, high] with low <= high")
        low, high = VARY_RANGE[key]
        if lo < low or hi > high:
            raise v[key].error(f"expected [low, high] within [{low:g}, {high:g}], got [{lo:g}, {hi:g}]")
        vary[key] = (float(lo), float(hi))
    return vary


def _description(cur: Cursor | None, spec_path: Path) -> tuple[str, System]:
    """The description's file (a relative path is taken from the spec's folder, as recordings
    are) or shipped name, loaded here: a bad one is refused at its key, not in every task."""
    if cur is None:
        return "bluerov2_heavy", _loaded("bluerov2_heavy")
    text = cur.text()
    name = text
    if not Path(text).expanduser().is_absolute() and (spec_path.parent / text).is_file():
        name = str(spec_path.parent / text)
    try:
        return name, _loaded(name)
    except ConfigError as exc:
        raise cur.error(str(exc)) from None


def _loaded(name: str) -> System:
    """``load(resolve(name))``, kept while the file is unchanged (read, never modified, by
    ``read_spec``: specs checked one after another load each description once)."""
    path = resolve(name)
    stat = path.stat()
    return _load_file(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _load_file(path: str, mtime_ns: int, size: int) -> System:
    return load(path)


def _recordings(cur: Cursor, spec_path: Path) -> list[str]:
    paths: list[str] = []
    items = cur.seq("a list of recordings (files or patterns)")
    if not items:
        raise cur.error("expected at least one recording")
    for item in items:
        text = item.text()
        pattern = text if Path(text).is_absolute() else str(spec_path.parent / text)
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        found = [p for p in found if Path(p).exists()]
        if not found:
            raise item.error(f"no recording {'matches' if glob.has_magic(pattern) else 'is at'} {pattern}")
        paths += found
        if len(paths) > MAX_RECORDINGS:
            raise cur.error(f"more than {MAX_RECORDINGS} recordings")
    return paths


def _names(cur: Cursor, allowed: tuple[str, ...], what: str) -> list[str]:
    names: list[str] = []
    for item in cur.seq(f"a list of {what}"):
        name = item.choice(allowed)
        if name in names:
            raise item.error(f"{name!r} is listed twice")
        names.append(name)
    return names


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


class SweepError(RuntimeError):
    """What keeps a sweep from running, in one line (Ray unreachable, its client missing)."""


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``ray://host[:port]`` or ``host:port`` address; None for Ray's own
    words (``auto``, ``local``)."""
    client = address.startswith("ray://")
    rest = address[len("ray://") :] if client else address
    host, sep, port = rest.rpartition(":")
    if not sep:
        host, port = rest, "10001" if client else ""
    if not port:
        return None
    if not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise SweepError(f"--address {address!r}: expected ray://HOST[:PORT] or HOST:PORT")
    return host.strip("[]"), int(port)


def connect(address: str | None, timeout: float) -> None:
    """``ray.init`` on this machine (``address`` None: Ray started for the sweep) or with the
    cluster at ``address`` (a head's ``host:port``, or ``ray://host[:port]`` through Ray's
    client), giving up after ``timeout`` s with a ``SweepError``: an unreachable or silent
    address is not waited on for ever."""
    import importlib.util
    import socket
    import threading

    import ray

    if address is None:
        ray.init(logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
        return
    client = address.startswith("ray://")
    if client and importlib.util.find_spec("grpc") is None:
        raise SweepError("ray:// addresses need Ray's client: pip install 'ray[client]' (or uvms_sim[sweep])")
    where = _host_port(address)
    what = "Ray client server" if client else "Ray head"
    if where is not None:
        try:
            socket.create_connection(where, timeout=timeout).close()
        except OSError as exc:
            why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
            raise SweepError(f"cannot reach the {what} at {address} ({why}, within {timeout:g} s)") from None
    if where is not None and not client:
        _ask_head(address, where, timeout)
    result: dict[str, BaseException | None] = {}
    end = time.monotonic() + timeout

    def init() -> None:
        # Ray's client server starts a server process for each client; on a loaded machine that
        # start can fail ("Initialization failure from server"): tried again until the timeout
        while True:
            try:
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
                result["error"] = None
                return
            except ConnectionAbortedError as exc:
                result["error"] = exc
                if not client or time.monotonic() > end - 5.0:
                    return
                ray.shutdown()
                time.sleep(2.0)
            except BaseException as exc:
                result["error"] = exc
                return

    thread = threading.Thread(target=init, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise SweepError(f"the {what} at {address} did not let this process join within {timeout:g} s "
                         "(is it a Ray address? --connect-timeout waits longer)")  # fmt: skip
    error = result["error"]
    if error is not None:
        lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
        why = (lines[0] if lines else type(error).__name__) + (f" ... {lines[-1]}" if len(lines) > 1 else "")
        raise SweepError(f"cannot join the {what} at {address}: {why[:300]}")


def _ask_head(address: str, where: tuple[str, int], timeout: float) -> None:
    """Ask the server at ``where`` what a Ray head answers (its GCS's cluster id, over gRPC)
    before Ray's own client tries: that client retries a server that is not a Ray head for
    ever, logging every attempt. Without gRPC's Python package, nothing is asked."""
    try:
        import grpc
    except ImportError:
        return
    with grpc.insecure_channel(f"{where[0]}:{where[1]}") as channel:
        ask = channel.unary_unary("/ray.rpc.NodeInfoGcsService/GetClusterId")  # an empty request
        try:
            ask(b"", timeout=timeout)
        except grpc.RpcError as exc:
            code = exc.code() if callable(getattr(exc, "code", None)) else None
            if code in (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE,
                        grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL):  # fmt: skip
                detail = exc.details() if callable(getattr(exc, "details", None)) else ""
                raise SweepError(f"{address} does not answer as a Ray head ({code.name.lower()}: "
                                 f"{str(detail)[:120]}; within {timeout:g} s)") from None  # fmt: skip
            # any other answer (e.g. a refusal without the cluster's token) comes from a Ray head


def run_sweep(
    spec: dict[str, Any],
    address: str | None = None,
    retries: int = 2,
    progress: Callable[[SweepReport, int], None] | None = None,
    connect_timeout: float = 60.0,
) -> SweepReport:
    """Every sample as a Ray task (module doc) on Ray at ``address`` (``connect``; None: Ray on
    this machine, started for the sweep). ``progress(report, n)`` is called after each sample
    that is done or lost. A sample that raises is lost at once (the same sample would raise
    again); one whose worker or node died is submitted again, up to ``retries`` times."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    t0 = time.monotonic()
    started = not ray.is_initialized()
    if started:
        connect(address, connect_timeout)
    try:
        task = ray.remote(max_retries=0, num_cpus=1)(_task).options(scheduling_strategy="SPREAD")
        n = sample_count(spec)
        pending = {task.remote(spec, k): (k, 0) for k in range(n)}
        report = SweepReport([])
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            k, attempt = pending.pop(ready[0])
            try:
                report.rows.append(ray.get(ready[0]))
            except RayTaskError as exc:  # raised by the sample itself
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                report.lost[k] = f"{type(cause).__name__}: {_first_line(cause)}"
            except RayError as exc:  # its worker or node died
                why = f"{type(exc).__name__}: {_first_line(exc, last=True)}"
                if attempt < retries:
                    report.retried.setdefault(k, []).append(why)
                    pending[task.remote(spec, k)] = (k, attempt + 1)
                else:
                    report.lost[k] = why
            if progress is not None:
                progress(report, n)
        report.rows.sort(key=lambda r: r["sample"])
        report.nodes = len({r["node"] for r in report.rows})
        report.wall = time.monotonic() - t0
        return report
    finally:
        if started:
            ray.shutdown()


def _first_line(exc: BaseException, last: bool = False) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()] or [""]
    return (lines[-1] if last else lines[0])[:200]


def sample_count(spec: dict[str, Any]) -> int:
    return spec["samples"] if spec["kind"] == "monte_carlo" else len(spec["recordings"])


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
    n = sample_count(spec)
    lines = [f"{len(report.rows)} of {n} samples done on {report.nodes} Ray node(s) in {report.wall:.1f} s; "
             f"{len(report.retried)} retried, {len(report.lost)} lost"]  # fmt: skip
    for k, whys in sorted(report.retried.items()):
        lines.append(f"  retried sample {k} ({len(whys)}x): {whys[0]}")
    for k, why in sorted(report.lost.items()):
        lines.append(f"  lost sample {k}: {why}")
    diverged = [r["sample"] for r in report.rows if r.get("finite") is False]
    if diverged:
        lines.append(f"  {len(diverged)} sample(s) did not stay finite: {_list(diverged)}")
    numeric = [c for c in (report.rows[0] if report.rows else {}) if c not in ("sample", "node")
               and all(isinstance(r.get(c), float) and math.isfinite(r[c]) for r in report.rows)]  # fmt: skip
    for c in numeric:
        values = np.array([r[c] for r in report.rows])
        lines.append(f"  {c:28s} mean {values.mean():10.4g}  std {values.std():10.4g}  "
                     f"min {values.min():10.4g}  max {values.max():10.4g}")  # fmt: skip
    return "\n".join(lines)


def failure(spec: dict[str, Any], report: SweepReport) -> str | None:
    """Why the sweep as a whole failed (samples lost, or no Monte-Carlo sample that stayed
    finite), in one line; None when every sample is in the table."""
    n = sample_count(spec)
    if report.lost:
        reasons = sorted(set(report.lost.values()))
        return f"{len(report.lost)} of {n} samples lost ({reasons[0]}{'; ...' if len(reasons) > 1 else ''})"
    if report.rows and all(r.get("finite") is False for r in report.rows):
        return f"no sample stayed finite: dt {spec['dt']:g} s is too long for this vehicle, or the draws are"
    return None


def _list(numbers: list[int], most: int = 10) -> str:
    shown = ", ".join(map(str, numbers[:most]))
    return shown + (f", ... ({len(numbers)} in all)" if len(numbers) > most else "")


__all__ = ["ConfigError", "SweepError", "failure", "read_spec", "run_sweep", "summary", "write_table"]
