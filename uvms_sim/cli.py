"""``uvms-sim`` command line: small entry points around the library."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, cast

import numpy as np

from .log import logger
from .model import ConfigError, load
from .model.configs import resolve, shipped_configs


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
    return "\n".join(lines)


def _error(message: str) -> int:
    """Say what is wrong on standard error; the exit status of a refused command line (2)."""
    print(f"error: {message}", file=sys.stderr)
    return 2


def run_sitl(description: str, bind: str, port: int, peer_timeout: float = 2.0) -> int:
    """Serve SITL until Ctrl-C, printing the frame counters every 10 s."""
    import time

    from .hil.sitl_json import SitlJsonBackend, check_address
    from .simulator import Simulator

    try:
        check_address(bind, port)
    except ValueError as exc:
        return _error(str(exc))
    sim = Simulator.from_system(load(resolve(description)))
    try:
        backend = SitlJsonBackend(sim, bind=bind, port=port, peer_timeout=peer_timeout)
    except ValueError as exc:
        return _error(str(exc))
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


def _number_in(lo: float, hi: float, what: str, unit: str = "", closed: bool = False, kind: type = float):
    """An argparse type: a number of ``kind`` (float or int) in (lo, hi], or [lo, hi] when
    ``closed`` (NaN and infinities are not)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'an integer' if kind is int else 'a number'}"
            ) from None
        if not (lo <= value <= hi if closed else lo < value <= hi):
            bracket = "[" if closed else "("
            raise argparse.ArgumentTypeError(
                f"{text} is not {what} in {bracket}{lo:g}, {hi:g}] {unit}".rstrip()
            )
        return value

    return parse


_positive = _number_in(0.0, 100000.0, "a rate", "Hz")
_step = _number_in(0.0, 1.0, "a step", "s")
_seconds = _number_in(0.0, 1.0e7, "a duration", "s", closed=True)  # 0: no limit
_count = _number_in(0, 10**9, "a count", closed=True, kind=int)
_port = _number_in(0, 65535, "a port", closed=True, kind=int)


def _axes(text: str) -> str:
    """argparse type of a list of body axes: some of u,v,w,p,q,r, comma separated."""
    axes = text.split(",")
    bad = [a for a in axes if a not in AXIS_INDEX]
    if bad or not text:
        raise argparse.ArgumentTypeError(f"{bad or text!r}: expected some of u,v,w,p,q,r, comma separated")
    return text


AXIS_INDEX = {a: k for k, a in enumerate("uvwpqr")}


def _motor_list(text: str) -> frozenset[int]:
    """argparse type of ``--reversed-motors``: motor numbers 1-16, comma separated, or none."""
    if text.strip().lower() == "none":
        return frozenset()
    try:
        motors = frozenset(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected motor numbers, comma separated, or none"
        ) from None
    if not all(1 <= m <= 16 for m in motors):
        raise argparse.ArgumentTypeError(f"{text!r}: motor numbers are 1-16")
    return motors


def _voltage(text: str) -> str:
    """argparse type of ``--voltage``: a number of volts in 10-20 or ``log``."""
    if text == "log":
        return text
    _number_in(10.0, 20.0, "a supply voltage", "V", closed=True)(text)
    return text


def _bound(text: str) -> tuple[str, tuple[float, float]]:
    """argparse type of ``--bound NAME=LO:HI``."""
    from .replay.identify import BOUNDS

    name, _, span = text.partition("=")
    lo, _, hi = span.partition(":")
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=LO:HI") from None
    if name not in BOUNDS:
        raise argparse.ArgumentTypeError(f"{name!r}: bounds are set for {', '.join(BOUNDS)}")
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise argparse.ArgumentTypeError(f"{text!r}: LO and HI must be finite, LO <= HI")
    return name, (low, high)


def _fit_list(text: str) -> tuple[str, ...]:
    """argparse type of ``--fit``: some of thrust, buoyancy, lag, delay."""
    from .replay.identify import GROUPS

    items = tuple(x for x in text.split(",") if x)
    bad = [x for x in items if x not in GROUPS or x == "damping"]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"{bad or text!r}: expected some of thrust,buoyancy,lag,delay")
    return items


def _impose_list(text: str) -> tuple[str, ...]:
    from .replay.windows import IMPOSABLE

    items = tuple(x for x in text.split(",") if x)
    if not items or any(x not in IMPOSABLE for x in items):
        raise argparse.ArgumentTypeError(f"{text!r}: expected some of {','.join(IMPOSABLE)}")
    return items


def run_replay(args) -> int:
    """``uvms-sim replay``: see ``uvms_sim.replay``."""
    from pathlib import Path

    from .replay.bag import BagError
    from .replay.report import describe
    from .replay.sources import read_recording
    from .replay.windows import with_supply_voltage

    paths = args.recordings
    identifying = bool(args.identify or args.identified_config or args.fit or args.identify_thrust)
    refusal = _replay_refusal(args, identifying)  # checked before any work is done
    if refusal:
        return _error(refusal)
    bags = []
    for path in paths:
        try:
            bag = read_recording(path, args.command_topic, args.odometry_topic)
        except BagError as exc:
            return _error(str(exc))
        if args.reversed_motors is not None:
            bag.reversed_motors = args.reversed_motors
        bags.append(bag)
    if args.live:
        for line in describe(paths[0], bags[0]):
            print(line)
        from .ros.bag_player import play

        return play(bags[0])
    if not args.config:
        return _error("replay needs --config (the system description) unless it is --live")
    system = load(resolve(args.config))
    try:
        voltages = _voltages(args.voltage, paths, bags, system)
    except ValueError as exc:
        return _error(str(exc))
    motors = {t.motor for t in system.thrusters if t.motor is not None}
    for path, bag in zip(paths, bags, strict=True):
        for line in describe(path, bag, motors):
            print(line)
    names = [Path(p).name.split(".")[0] for p in paths]
    if len(paths) == 1 and (not args.window or args.out or args.plot or args.rrd):
        _whole_replay(
            args, system if voltages[0] is None else with_supply_voltage(system, voltages[0]), bags[0]
        )
    if args.window and _windowed(args, system, bags, names, voltages):
        return 2
    if identifying:
        if args.voltage:  # one thrust model for the fit: the recordings' mean supply
            system = with_supply_voltage(system, float(np.mean(cast(list[float], voltages))))
        return _identify(args, system, bags, names)
    return 0


def _windowed(args, system, bags, names, voltages) -> int:
    """The recordings replayed in windows of ``--window`` s from the measured state, summed up;
    0, or 2 after saying why a recording cannot be."""
    from dataclasses import replace

    from .replay.windows import format_summary, run_from_recording, summary, validate

    try:
        runs = [run_from_recording(n, b) for n, b in zip(names, bags, strict=True)]
        runs = [replace(r, voltage=v) for r, v in zip(runs, voltages, strict=True)]
    except ValueError as exc:
        return _error(str(exc))
    results = validate(system, runs, args.window, args.dt, args.impose)
    imposed = f", imposing the measured {' and '.join(args.impose)}" if args.impose else ""
    print(f"windowed validation, {args.window:g} s windows from the measured state{imposed}:")
    print("  " + format_summary(summary(results)))
    return 0


def _replay_refusal(args, identifying: bool) -> str | None:
    """What is wrong with the replay's options (outputs and their number of recordings), if
    anything."""
    from pathlib import Path

    for option, path in (("--rrd", args.rrd), ("--plot", args.plot)):
        if path and not Path(path).resolve().parent.is_dir():
            return f"{option} {path}: no directory {Path(path).resolve().parent}"
    if args.out and Path(args.out).exists():
        return f"--out {args.out} exists: a bag is written into a new directory"
    if len(args.recordings) > 1 and (args.live or args.out or args.plot or args.rrd):
        return "--live, --out, --plot and --rrd take one recording"
    if len(args.recordings) > 1 and not (args.window or identifying):
        return "several recordings are compared with --window or fitted with --identify/--fit"
    return None


def _voltages(voltage: str | None, paths: list[str], bags: list, system) -> list[float | None]:
    """Each recording's thruster supply for ``--voltage`` (a number, or ``log``: the median of
    its battery voltage), checked against the thrust model; None each without the option.
    ValueError (the one-line message) if a recording has no voltage or a value is out of the
    tables' range."""
    if not voltage:
        return [None] * len(bags)
    from .replay.windows import with_supply_voltage

    volts: list[float] = []
    for path, bag in zip(paths, bags, strict=True):
        if voltage != "log":
            volts.append(float(voltage))
        elif bag.battery.t:
            volts.append(float(np.median(bag.battery.values)))
        else:
            raise ValueError(f"--voltage log: {path} has no battery voltage")
    try:
        for v in volts:
            with_supply_voltage(system, v)
    except ValueError as exc:
        raise ValueError(f"--voltage: {exc}") from None
    print(f"thrusters on {', '.join(f'{v:.2f}' for v in volts)} V")
    return list[float | None](volts)


def _whole_replay(args, system, bag) -> None:
    """The whole recording replayed open loop from its first measured state."""
    import time

    from .replay.compare import compare
    from .replay.report import format_table, plot
    from .replay.run import replay, write_prediction
    from .replay.windows import with_reversed_motors

    if bag.reversed_motors is not None:
        system = with_reversed_motors(system, bag.reversed_motors)
    n_cmd, n_odo = len(bag.commands.t) + len(bag.overrides.t), len(bag.odometry.t)
    wall = time.monotonic()
    configurations: list | None = [] if args.out or args.rrd else None  # for the output bag and recording
    t, predicted = replay(system, bag, dt=args.dt, progress=True, configurations=configurations)
    wall = time.monotonic() - wall
    span = t[-1] - t[0] if len(t) > 1 else 0.0
    print(f"replayed {span:.1f} s of recording in {wall:.1f} s ({span / max(wall, 1e-9):.1f}x real time, "
          f"{(n_cmd + n_odo) / max(wall, 1e-9):.0f} messages/s)")  # fmt: skip
    measured = bag.odometry.arrays()[1] if n_odo else None
    if measured is not None:
        print(format_table(compare(t, predicted, measured)))
    if args.out:
        write_prediction(args.out, bag, t, predicted, args.storage, system, configurations or [])
        print(f"wrote {args.out}")
    if args.plot:
        print(f"wrote {plot(args.plot, t, predicted, measured)}")
    if args.rrd:
        from .viz.rerun_view import RerunView

        view = RerunView(system, save=args.rrd, rate=1e9)  # every sample
        for t_k, q in zip(t, configurations or [], strict=True):
            view.update(float(t_k), q, None, force=True)
        view.close()
        print(f"wrote {args.rrd} (open it with the Rerun viewer: rerun {args.rrd})")


def _identify(args, system, bags, names) -> int:
    from .model.export import save_yaml
    from .replay.heldout import held_out
    from .replay.identify import apply_identified, identify, overlay_yaml
    from .replay.report import format_identification
    from .replay.windows import format_summary

    if any(not b.odometry.t for b in bags):
        return _error("identification needs the measured motion (odometry, poses or an estimate)")
    fit = set(args.fit or ()) | ({"thrust"} if args.identify_thrust else set())
    options: dict[str, Any] = dict(
        axes=[AXIS_INDEX[a] for a in args.axes.split(",")],
        thrust="thrust" in fit,
        buoyancy="buoyancy" in fit,
        lag="lag" in fit,
        delay="delay" in fit,
        bounds=dict(args.bound or ()),
    )
    try:
        fitted = identify(system, bags, bootstrap=args.bootstrap, names=names, **options)
        print(format_identification(fitted, f"identified from {len(bags)} recording(s)"))
        check = held_out(system, bags, names, args.window or 12.0, args.impose, **options)
    except ValueError as exc:
        return _error(str(exc))
    print(f"held-out windowed error ({check.how}):")
    print("  original: " + format_summary(check.original))
    print("  fitted:   " + format_summary(check.fitted))
    if args.identify:
        with open(args.identify, "w") as f:
            f.write(overlay_yaml(system, fitted))
        print(f"wrote {args.identify}")
    if args.identified_config:
        save_yaml(
            apply_identified(system, fitted), args.identified_config, f"identified from {', '.join(names)}"
        )
        print(f"wrote {args.identified_config}")
    return 0


def run_sweep_command(args) -> int:
    """``uvms-sim sweep``: see ``uvms_sim.sweep``."""
    import importlib.util
    from pathlib import Path

    from .sweep import read_spec, run_sweep, summary, write_table

    if importlib.util.find_spec("ray") is None:
        return _error("sweeps run on Ray: pip install 'uvms_sim[sweep]' (or ray)")
    if not Path(args.spec).is_file():
        return _error(f"{args.spec}: no such spec")
    if not Path(args.out).resolve().parent.is_dir():
        return _error(f"--out {args.out}: no directory {Path(args.out).resolve().parent}")
    spec = read_spec(args.spec)
    report = run_sweep(spec, args.address, args.retries)
    write_table(report.rows, args.out)
    print(summary(spec, report))
    print(f"wrote {args.out} ({len(report.rows)} rows)")
    return 0 if report.rows else 1


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
    sitl.add_argument("--port", type=_port, default=9002, help="UDP port (ArduPilot's default 9002)")
    sitl.add_argument(
        "--peer-timeout",
        type=float,
        default=2.0,
        help="seconds of silence after which another SITL address is served (default 2)",
    )
    hil = sub.add_parser("hil", help="MAVLink HIL with an autopilot board (PX4 HITL; see docs)")
    hil.add_argument("description", nargs="?", default="bluerov2_heavy")
    hil.add_argument("--connection", default="udpin:127.0.0.1:14560", help="pymavlink connection string")
    hil.add_argument("--rate", type=_positive, default=250.0, help="steps per second (default 250)")


def _replay_command(sub) -> None:
    rep = sub.add_parser(
        "replay",
        help="run the model on recorded thruster commands (rosbags, ArduSub .BIN/.tlog logs, CSV runs) and "
        "compare with the recorded motion",
    )
    rep.add_argument(
        "recordings",
        nargs="+",
        metavar="RECORDING",
        help="ROS 2 bag directory, .db3/.mcap, ROS 1 .bag, ArduSub DataFlash .BIN, telemetry .tlog, "
        "or CSV run",
    )
    rep.add_argument("--config", help="the system description (file or shipped name); not needed with --live")
    rep.add_argument("--out", help="write an output bag with /predicted/odom and /recorded/odom")
    rep.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3")
    rep.add_argument("--plot", help="write a PNG of predicted against recorded motion")
    rep.add_argument(
        "--rrd", help="write the predicted motion as a Rerun recording (.rrd) with the vehicle drawn"
    )
    rep.add_argument("--command-topic")
    rep.add_argument("--odometry-topic")
    rep.add_argument("--dt", type=_step, default=0.005, help="integration step, s (default 0.005)")
    rep.add_argument(
        "--window",
        type=_number_in(0.0, 3600.0, "a window", "s"),
        help="replay every window of this many seconds from the measured state and compare with the "
        "constant- and zero-velocity baselines (windowed validation)",
    )
    rep.add_argument(
        "--impose",
        type=_impose_list,
        default=(),
        help="with --window: measured attitude and/or depth replace the model's at every sample "
        "(attitude,depth; the autopilot's stabilisation was in the loop)",
    )
    rep.add_argument(
        "--reversed-motors",
        type=_motor_list,
        help="motors mounted reversed on the recording vehicle (MOT_n_DIRECTION = -1), e.g. 1,2,5,8 or none; "
        "default: from an ArduSub log's parameters, else as the description declares",
    )
    rep.add_argument(
        "--voltage",
        type=_voltage,
        help="the thrusters' supply in volts (T200 tables, 10-20 V), or log: each recording's median battery "
        "voltage (an ArduSub log's BAT / SYS_STATUS); default: as the description says",
    )
    rep.add_argument("--identify", help="fit the damping and write a YAML overlay (hull hydrodynamics) here")
    rep.add_argument("--identified-config", help="fit and write the whole description with the fitted values")
    rep.add_argument("--identify-thrust", action="store_true", help="also fit forward/reverse thrust scales")
    rep.add_argument(
        "--fit",
        type=_fit_list,
        help="also fit some of thrust,buoyancy,lag,delay (thrust scales, net buoyancy, thruster time "
        "constant, "
        "command delay); prints the fit and its held-out error",
    )
    rep.add_argument(
        "--bound",
        type=_bound,
        action="append",
        help="bounds of a fitted parameter, NAME=LO:HI (e.g. thrust_forward_scale=0.7:1.2); repeatable",
    )
    rep.add_argument(
        "--bootstrap",
        type=_number_in(0, 10000, "a count", closed=True, kind=int),
        default=100,
        help="bootstrap resamples for the standard errors (default 100; 0: formal errors only)",
    )
    rep.add_argument(
        "--axes", type=_axes, default="u,v,w,r", help="damping axes to fit, of u,v,w,p,q,r (default u,v,w,r)"
    )
    rep.add_argument(
        "--live",
        action="store_true",
        help="publish the recording's commands and /clock into a running simulator node",
    )


def _tool_commands(sub) -> None:
    sweep = sub.add_parser(
        "sweep", help="Monte-Carlo or identification sweep as Ray tasks, on this machine or a Ray cluster"
    )
    sweep.add_argument("spec", help="the sweep's YAML spec (see uvms_sim.sweep)")
    sweep.add_argument(
        "--address", help="a Ray cluster (ray://host:10001, or host:port of its head); default: Ray here"
    )
    sweep.add_argument("--out", default="sweep.csv", help="the results table (.csv, or .parquet)")
    sweep.add_argument(
        "--retries",
        type=_number_in(0, 100, "a count", closed=True, kind=int),
        default=2,
        help="submissions of a failed sample",
    )
    sub.add_parser("demo", help="run the ROS 2 demo (python -m uvms_sim.demo; --help for its options)")
    show = sub.add_parser("echo", help="print a topic's messages (as ros2 topic echo)")
    show.add_argument("topic")
    show.add_argument("--count", type=_count, default=0, help="messages to print (default 0: until Ctrl-C)")
    show.add_argument("--timeout", type=_seconds, default=10.0, help="seconds to wait for it (default 10)")
    rec = sub.add_parser("record", help="record live topics into a rosbag2 directory (as ros2 bag record)")
    rec.add_argument("output", help="the bag directory to create")
    rec.add_argument("topics", nargs="*", help="topics to record (default: all, new ones as they appear)")
    rec.add_argument("--duration", type=_seconds, default=0.0, help="seconds (default 0: until Ctrl-C)")
    rec.add_argument("--storage", choices=("sqlite3", "mcap"), default="sqlite3")
    rec.add_argument(
        "--use-sim-time", action="store_true", help="stamp with /clock instead of the wall clock"
    )
    sub.add_parser("build-interfaces", help="build tf2_msgs and mavros_msgs into this environment (no ROS)")


def parser() -> argparse.ArgumentParser:
    """The ``uvms-sim`` command line and its subcommands."""
    top = argparse.ArgumentParser(prog="uvms-sim", description="uvms_sim tools")
    sub = top.add_subparsers(dest="command", required=True)
    for add in (_description_commands, _link_commands, _replay_command, _tool_commands):
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
    from .model.urdf_writer import urdf_text

    text = urdf_text(load(resolve(args.description)), args.frame_prefix, args.frame_prefix + args.frame_id)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def _convert(args) -> int:
    from .model.export import save_yaml

    system = load(resolve(args.source), overlay=args.overlay)
    save_yaml(system, args.output, f"Converted by uvms-sim convert from {args.source}")
    print(f"wrote {args.output}")
    return 0


def _hil(args) -> int:
    from .hil.mavlink_hil import MavlinkHil
    from .simulator import Simulator

    sim = Simulator.from_system(load(resolve(args.description)))
    try:
        bridge = MavlinkHil(sim, args.connection)
    except (OSError, ValueError, OverflowError) as exc:  # bad address, no such device
        return _error(f"cannot open {args.connection!r}: {exc}")
    print(f"uvms_sim MAVLink HIL on {args.connection} at {args.rate:.0f} Hz (Ctrl-C stops)")
    try:
        bridge.run(args.rate)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.close()
    return 0


def _echo(args) -> int:
    from .ros.tools import echo

    return echo(args.topic, args.count, args.timeout)


def _record(args) -> int:
    from .ros.tools import record

    return record(args.output, args.topics, args.duration, args.storage, args.use_sim_time)


COMMANDS = {
    "models": _models, "check": _check, "urdf": _urdf, "convert": _convert,
    "sitl": lambda a: run_sitl(a.description, a.bind, a.port, a.peer_timeout), "hil": _hil,
    "replay": run_replay, "sweep": run_sweep_command, "echo": _echo, "record": _record,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["demo"]:  # its own options, --help included
        from . import demo

        demo.main(argv[1:])
        return 0
    if argv[:1] == ["build-interfaces"]:
        from .rosidl_build import main as build_main

        build_main(argv[1:])
        return 0
    args = parser().parse_args(argv)
    if not logger.handlers:  # the library's warnings (unit slips, clamped inputs) as plain lines
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        logger.addHandler(handler)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # a path the file system refuses (too long, a directory, no permission)
        return _error(f"{exc.strerror or exc}: {exc.filename or ''}"[:293])


if __name__ == "__main__":
    sys.exit(main())
