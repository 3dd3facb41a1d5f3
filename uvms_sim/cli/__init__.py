"""``uvms-sim`` command line: small entry points around the library (``replay``, the largest,
in ``cli.replay``; the argparse types they share in ``cli.options``)."""

from __future__ import annotations

import argparse
import logging
import sys

import numpy as np

from .. import __version__
from ..hil.px4 import DEFAULT_HOME, MOTOR_MAPS
from ..log import logger
from ..model import ConfigError, load
from ..model.configs import resolve, shipped_configs
from .options import (
    IntermixedParser,
    count,
    duration,
    error,
    iso_date,
    number_in,
    port,
    rate,
    speed,
    time_step,
)
from .replay import add_replay_command, run_replay


def _summary(path: str) -> str:
    system = load(resolve(path))
    m = system.model
    lines = [f"{system.name}: {m.nbodies} bodies, nq={m.nq}, nv={m.nv} ({system.source})"]
    g, rho = system.environment.gravity, system.environment.density
    for v in system.vehicles:
        idx = [m.body_index(b) for b in v.bodies]
        mass = float(m.mass[idx].sum())
        vol = float(m.volume[idx].sum())
        lines.append(
            f"  vehicle {v.name}: root {v.root}, {len(v.bodies)} links, {len(v.thrusters)} thrusters, "
            f"mass {mass:.3f} kg, weight {mass * g:.2f} N, buoyancy {rho * vol * g:.2f} N"
        )
    if system.environment.current_profile is not None:
        lines.append(f"  current: {type(system.environment.current_profile).__name__}")
    elif np.any(system.environment.current):
        lines.append(f"  current: {system.environment.current.tolist()} m/s (NED)")
    waves = system.environment.waves
    if waves is not None:
        kind = dict(waves.spec).get("type", "waves")
        lines.append(f"  waves: {kind}, {len(waves)} components, Hs {waves.significant_height:.3g} m")
    for t in system.tethers:
        lines.append(
            f"  tether {t.name}: {t.length:g} m in {t.segments} segments from {t.anchor.tolist()} (NED) "
            f"to {t.link} at {t.position.tolist()}"
        )
    scene = system.scene
    if scene is not None and (scene.seabed is not None or scene.structures):
        sb = scene.seabed
        seabed = "no seabed" if sb is None else f"{sb.kind} seabed, deepest {sb.water_depth():.4g} m"
        names = ", ".join(s.name for s in scene.structures[:6]) + (
            ", ..." if len(scene.structures) > 6 else ""
        )
        lines.append(
            f"  scene: {seabed}, {len(scene.structures)} structures" + (f" ({names})" if names else "")
        )
    return "\n".join(lines)


def run_sitl(description: str, bind: str, port: int, peer_timeout: float = 2.0) -> int:
    """Serve SITL until Ctrl-C, printing the frame counters every 10 s."""
    import time

    from ..hil.sitl_json import check_address
    from ..hil.sitl_multi import SitlJsonMulti, sitl_backend
    from ..simulator import Simulator

    try:
        check_address(bind, port)
    except ValueError as exc:
        return error(str(exc))
    sim = Simulator.from_system(load(resolve(description)))
    try:
        backend = sitl_backend(sim, bind=bind, port=port, peer_timeout=peer_timeout)
    except ValueError as exc:
        return error(str(exc))
    if isinstance(backend, SitlJsonMulti):
        names = [sim.system.vehicles[i.vehicle].name for i in backend.instances] if sim.system else []
        for inst, name in zip(backend.instances, names, strict=True):
            print(f"uvms_sim SITL JSON backend for {name} on {bind}:{inst.port}: start ArduSub with "
                  f"-I {inst.number} --model JSON:{bind}")  # fmt: skip
    else:
        print(f"uvms_sim SITL JSON backend on {bind}:{backend.port}: start ArduSub with --model JSON:{bind}")
    last = time.monotonic()
    try:
        while True:
            backend.serve_once(0.5)
            if time.monotonic() - last > 10.0:
                c = backend.counters
                split = ", ".join(f"{k} {v:.0f} us" for k, v in backend.times.split().items())
                print(f"t = {backend.sim.state.t:.1f} s, frames {c.frames}, resends {c.resends}, "
                      f"restarts {c.restarts}, lost {c.lost}, dropped {c.dropped}, ignored {c.ignored}; "
                      f"per frame: {split}")  # fmt: skip
                last = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()
    return 0


def run_sweep_command(args) -> int:
    """``uvms-sim sweep``: see ``uvms_sim.sweep``."""
    import importlib.util
    from pathlib import Path

    from ..sweep import SweepError, failure, read_spec, run_sweep, summary, write_table
    from .progress import Progress

    if importlib.util.find_spec("ray") is None:
        return error("sweeps run on Ray: pip install 'uvms_sim[sweep]' (or ray)")
    if not Path(args.spec).is_file():
        return error(f"{args.spec}: no such spec")
    if not Path(args.out).resolve().parent.is_dir():
        return error(f"--out {args.out}: no directory {Path(args.out).resolve().parent}")
    spec = read_spec(args.spec)
    progress = Progress(f"sweep {args.spec}")

    def show(report, n: int) -> None:
        lost = f"{len(report.lost)} lost" if report.lost else ""
        progress.update(len(report.rows) + len(report.lost), n, lost)

    try:
        report = run_sweep(spec, args.address, args.retries, show, args.connect_timeout)
    except SweepError as exc:
        return error(str(exc))
    finally:
        progress.close()
    write_table(report.rows, args.out)
    print(summary(spec, report))
    print(f"wrote {args.out} ({len(report.rows)} rows)")
    why = failure(spec, report)
    if why is not None:
        print(f"error: {args.spec}: {why}", file=sys.stderr)
        return 1
    return 0


def _description_commands(sub) -> None:
    sub.add_parser("models", help="list the shipped system descriptions (config/*.yaml)")
    check = sub.add_parser(
        "check",
        help="load a description (.yaml/.urdf/.xacro or a shipped name) and summarise it",
        description="Load a description and summarise it, or say what is wrong in one line. A .xacro "
        "file is a program: xacro evaluates its ${...} expressions as Python, so check (and load) only "
        "xacro files you trust, as with ROS itself; .yaml and .urdf files are only read.",
    )
    check.add_argument("description", nargs="+")
    urdf = sub.add_parser(
        "urdf",
        help="write a description as a URDF with visuals (what the node publishes on robot_description)",
    )
    urdf.add_argument("description")
    urdf.add_argument("--out", help="the file to write (default: standard output)")
    urdf.add_argument("--frame-prefix", default="", help="as the node's frame_prefix parameter")
    urdf.add_argument(
        "--frame-id", default="odom", help="the world frame, as the node's frame_id (default odom)"
    )
    conv = sub.add_parser("convert", help="write a description (e.g. a URDF) as a uvms_sim YAML file")
    conv.add_argument("source")
    conv.add_argument("output")
    conv.add_argument("--overlay", help="YAML overlay with hydrodynamics/thrusters for a URDF")


def _link_commands(sub) -> None:
    sitl = sub.add_parser("sitl", help="be the physics of an ArduSub SITL (--model JSON:127.0.0.1)")
    sitl.add_argument("description", nargs="?", default="bluerov2_heavy")
    sitl.add_argument("--bind", default="127.0.0.1", help="IPv4 address to listen on (default loopback)")
    sitl.add_argument("--port", type=port, default=9002, help="UDP port (ArduPilot's default 9002)")
    sitl.add_argument(
        "--peer-timeout",
        type=float,
        default=2.0,
        help="seconds of silence after which another SITL address is served (default 2)",
    )
    hil = sub.add_parser(
        "hil", help="MAVLink HIL with PX4: SITL lock-step over tcpin:, HITL over serial/UDP (docs/px4.md)"
    )
    hil.add_argument("description", nargs="?", default="bluerov2_heavy")
    hil.add_argument(
        "--connection",
        default="udpin:127.0.0.1:14560",
        help="tcpin:127.0.0.1:4560 for PX4 SITL (lock-step), a serial device or udpin: for HITL",
    )
    add = hil.add_argument
    add("--rate", type=rate, default=250.0, help="HITL: steps per second of wall time (default 250)")
    add("--step", type=time_step, default=0.004, help="SITL: seconds per lock-step (default 0.004)")
    add(
        "--speed", type=speed, default=1.0, help="SITL: at most this times real time (default 1; 0: no limit)"
    )
    add(
        "--motors",
        choices=MOTOR_MAPS,
        default="px4-60002",
        help="whose motor order and directions (default px4-60002)",
    )
    add("--home", type=float, nargs=3, metavar=("LAT", "LON", "ALT"), default=DEFAULT_HOME,
        help="water surface latitude, longitude (deg), altitude (m); default PX4 SITL's home")  # fmt: skip
    add("--date", type=iso_date, default=None, help="YYYY-MM-DD for the magnetic model (default today)")
    add("--gps-rate", type=rate, default=5.0, help="HIL_GPS per second at the surface (default 5)")
    add("--gps-depth", type=float, default=0.3, help="deepest origin with a GPS fix, m (default 0.3)")
    add("--underwater-gps", choices=("nofix", "acoustic"), default="nofix",
        help="under water: a receiver without fix, or an acoustic positioning system as GPS")  # fmt: skip
    add("--seed", type=int, default=0, help="of the sensor noise (default 0)")


def _tool_commands(sub) -> None:
    sweep = sub.add_parser(
        "sweep", help="Monte-Carlo or identification sweep as Ray tasks, on this machine or a Ray cluster"
    )
    sweep.add_argument("spec", help="the sweep's YAML spec (see uvms_sim.sweep)")
    sweep.add_argument(
        "--address",
        help="a Ray cluster: host:port of its head (ray start --head), or ray://host:10001 through Ray's "
        "client (pip install 'ray[client]'); default: Ray started here for the sweep",
    )
    sweep.add_argument(
        "--connect-timeout",
        type=number_in(0.0, 3600.0, "a time", "s"),
        default=60.0,
        help="seconds to wait for the cluster at --address (default 60)",
    )
    sweep.add_argument("--out", default="sweep.csv", help="the results table (.csv, or .parquet)")
    sweep.add_argument(
        "--retries",
        type=number_in(0, 100, "a count", closed=True, kind=int),
        default=2,
        help="submissions of a failed sample",
    )
    sub.add_parser(
        "kernels",
        help="compile the physics kernels into numba's cache now (once after an install or an update; "
        "else the first simulation compiles them, about a minute on 2 cores)",
    )
    sub.add_parser("demo", help="run the ROS 2 demo (python -m uvms_sim.demo; --help for its options)")
    show = sub.add_parser("echo", help="print a topic's messages (as ros2 topic echo)")
    show.add_argument("topic")
    show.add_argument("--count", type=count, default=0, help="messages to print (default 0: until Ctrl-C)")
    show.add_argument("--timeout", type=duration, default=10.0, help="seconds to wait for it (default 10)")
    rec = sub.add_parser("record", help="record live topics into a rosbag2 directory (as ros2 bag record)")
    rec.add_argument("output", help="the bag directory to create")
    rec.add_argument("topics", nargs="*", help="topics to record (default: all, new ones as they appear)")
    rec.add_argument("--duration", type=duration, default=0.0, help="seconds (default 0: until Ctrl-C)")
    rec.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3")
    rec.add_argument(
        "--use-sim-time", action="store_true", help="stamp with /clock instead of the wall clock"
    )
    sub.add_parser("build-interfaces", help="build tf2_msgs and mavros_msgs into this environment (no ROS)")


def parser() -> argparse.ArgumentParser:
    """The ``uvms-sim`` command line and its subcommands."""
    top = argparse.ArgumentParser(prog="uvms-sim", description="uvms_sim tools")
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=IntermixedParser)
    for add in (_description_commands, _link_commands, add_replay_command, _tool_commands):
        add(sub)
    return top


def _models(args) -> int:
    found = shipped_configs()
    if not found:
        print("error: no shipped configs found (is the package installed whole?)", file=sys.stderr)
        return 1
    for name, path in found.items():
        m = load(path).model
        print(f"{name:26s} bodies={m.nbodies:3d} nq={m.nq:3d} nv={m.nv:3d}  {path}")
    return 0


def _check(args) -> int:
    for d in args.description:
        print(_summary(d))
    return 0


def _urdf(args) -> int:
    from ..model.urdf_writer import urdf_text

    text = urdf_text(load(resolve(args.description)), args.frame_prefix, args.frame_prefix + args.frame_id)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def _convert(args) -> int:
    from ..model.export import save_yaml

    system = load(resolve(args.source), overlay=args.overlay)
    save_yaml(system, args.output, f"Converted by uvms-sim convert from {args.source}")
    print(f"wrote {args.output}")
    return 0


def _hil(args) -> int:
    from ..hil.hil_sensors import GpsSpec
    from ..hil.mavlink_hil import MavlinkHil
    from ..simulator import Simulator

    sim = Simulator.from_system(load(resolve(args.description)))
    try:
        gps = GpsSpec(rate=args.gps_rate, depth=args.gps_depth, underwater=args.underwater_gps)
        bridge = MavlinkHil(sim, args.connection, tuple(args.home), args.date, args.motors, gps, args.step,
                            seed=args.seed)  # fmt: skip
    except (OSError, ValueError, OverflowError) as exc:  # bad address, no such device, bad home
        return error(f"cannot open {args.connection!r}: {exc}")
    if bridge.lockstep:
        print(f"uvms_sim MAVLink HIL: lock-step on {args.connection}, waiting for PX4 SITL (Ctrl-C stops)")
    else:
        print(f"uvms_sim MAVLink HIL on {args.connection} at {args.rate:.0f} Hz (Ctrl-C stops)")
    try:
        if bridge.lockstep:
            bridge.serve(speed=args.speed)
        else:
            bridge.run(args.rate)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.close()
    return 0


def _echo(args) -> int:
    from ..ros.tools import echo

    return echo(args.topic, args.count, args.timeout)


def _record(args) -> int:
    from ..ros.tools import record

    return record(args.output, args.topics, args.duration, args.storage, args.use_sim_time)


def _kernels(args) -> int:
    from ..kernels import main as compile_kernels
    from ..ros.message_kernels import warm_up

    compile_kernels()
    warm_up()  # the node's message kernels
    return 0


COMMANDS = {
    "models": _models, "check": _check, "urdf": _urdf, "convert": _convert,
    "sitl": lambda a: run_sitl(a.description, a.bind, a.port, a.peer_timeout), "hil": _hil,
    "replay": run_replay, "sweep": run_sweep_command, "echo": _echo, "record": _record,
    "kernels": _kernels,
}  # fmt: skip


class _StandardError(logging.StreamHandler):
    """A handler that writes to whatever ``sys.stderr`` is when it writes (a command run twice
    in one process, as the tests do, must not write to the first run's closed stream)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:  # its own options, --help included
        from .. import demo

        demo.main(argv[1:])
        return 0
    if argv[:1] == ["build-interfaces"]:
        from ..rosidl_build import main as build_main

        build_main(argv[1:])
        return 0
    args = parser().parse_args(argv)
    if not logger.handlers:  # the library's warnings (unit slips, clamped inputs) as plain lines
        handler = _StandardError()
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        logger.addHandler(handler)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        return error(str(exc))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # a path the file system refuses (too long, a directory, no permission)
        return error(f"{exc.strerror or exc}: {exc.filename or ''}"[:293])
