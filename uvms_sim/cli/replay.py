"""``uvms-sim replay``: recordings replayed open loop or in windows, and the model identified
from them (``uvms_sim.replay``); its options and their argparse types."""

from __future__ import annotations

import argparse
from typing import Any, cast

import numpy as np

from ..model import load
from ..model.configs import resolve
from .options import error, number_in, time_step


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
    number_in(10.0, 20.0, "a supply voltage", "V", closed=True)(text)
    return text


def _bound(text: str) -> tuple[str, tuple[float, float]]:
    """argparse type of ``--bound NAME=LO:HI``."""
    from ..replay.identify import BOUNDS

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
    from ..replay.identify import GROUPS

    items = tuple(x for x in text.split(",") if x)
    bad = [x for x in items if x not in GROUPS or x == "damping"]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"{bad or text!r}: expected some of thrust,buoyancy,lag,delay")
    return items


def _impose_list(text: str) -> tuple[str, ...]:
    from ..replay.windows import IMPOSABLE

    items = tuple(x for x in text.split(",") if x)
    if not items or any(x not in IMPOSABLE for x in items):
        raise argparse.ArgumentTypeError(f"{text!r}: expected some of {','.join(IMPOSABLE)}")
    return items


def run_replay(args) -> int:
    """``uvms-sim replay``: see ``uvms_sim.replay``."""
    from pathlib import Path

    from ..replay.bag import BagError
    from ..replay.report import describe
    from ..replay.sources import read_recording
    from ..replay.windows import with_supply_voltage

    paths = args.recordings
    identifying = bool(args.identify or args.identified_config or args.fit or args.identify_thrust)
    refusal = _replay_refusal(args, identifying)  # checked before any work is done
    if refusal:
        return error(refusal)
    bags = []
    for path in paths:
        try:
            bag = read_recording(path, args.command_topic, args.odometry_topic)
        except BagError as exc:
            return error(str(exc))
        if args.reversed_motors is not None:
            bag.reversed_motors = args.reversed_motors
        bags.append(bag)
    if args.live:
        for line in describe(paths[0], bags[0]):
            print(line)
        from ..ros.bag_player import play

        return play(bags[0])
    if not args.config:
        return error("replay needs --config (the system description) unless it is --live")
    system = load(resolve(args.config))
    if args.no_surface:  # deep water: the recording's vertical origin is not the water level
        system.environment.surface = None
    try:
        voltages = _voltages(args.voltage, paths, bags, system)
    except ValueError as exc:
        return error(str(exc))
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

    from ..replay.windows import format_summary, run_from_recording, summary, validate

    try:
        runs = [run_from_recording(n, b) for n, b in zip(names, bags, strict=True)]
        runs = [replace(r, voltage=v) for r, v in zip(runs, voltages, strict=True)]
    except ValueError as exc:
        return error(str(exc))
    results = validate(system, runs, args.window, args.dt, args.impose)
    if not results:
        longest = max((r.t[-1] - r.t[0] if len(r.t) > 1 else 0.0) for r in runs)
        return error(
            f"no {args.window:g} s window fits in the recordings (the longest has {longest:.1f} s of "
            "motion): use a shorter --window"
        )
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
    from ..replay.windows import with_supply_voltage

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

    from ..replay.compare import compare
    from ..replay.report import format_table, plot
    from ..replay.run import replay, write_prediction
    from ..replay.windows import with_reversed_motors
    from .progress import Progress

    if bag.reversed_motors is not None:
        system = with_reversed_motors(system, bag.reversed_motors)
    n_cmd, n_odo = len(bag.commands.t) + len(bag.overrides.t), len(bag.odometry.t)
    wall = time.monotonic()
    configurations: list | None = [] if args.out or args.rrd else None  # for the output bag and recording
    progress = Progress("replaying, per cent")
    t, predicted = replay(system, bag, dt=args.dt, progress=progress.update, configurations=configurations)
    progress.close()
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
        from ..viz.rerun_view import RerunView

        view = RerunView(system, save=args.rrd, rate=1e9)  # every sample
        for t_k, q in zip(t, configurations or [], strict=True):
            view.update(float(t_k), q, None, force=True)
        view.close()
        print(f"wrote {args.rrd} (open it with the Rerun viewer: rerun {args.rrd})")


def _identify(args, system, bags, names) -> int:
    """The fit over the recordings, what to fit chosen by held-out error
    (``replay.heldout.choose``), and the chosen fit written if asked; the described parameters
    kept (nothing written) when no fit beats them on held-out data."""
    from ..model.export import save_yaml
    from ..replay.heldout import choose
    from ..replay.identified import apply_identified, overlay_yaml
    from ..replay.identify import identify
    from ..replay.report import format_identification
    from ..replay.windows import format_summary

    if any(not b.odometry.t for b in bags):
        return error("identification needs the measured motion (odometry, poses or an estimate)")
    asked = set(args.fit or ()) | ({"thrust"} if args.identify_thrust else set())
    groups = tuple(g for g in ("thrust", "buoyancy", "lag", "delay") if g in asked)
    common: dict[str, Any] = dict(
        axes=[AXIS_INDEX[a] for a in args.axes.split(",")], bounds=dict(args.bound or ())
    )
    seconds = args.window or 12.0
    try:
        print(f"held-out windowed error of each candidate fit ({seconds:g} s windows):")
        described: list[int] = []

        def report(label, check):
            if not described:
                described.append(1)
                print(f"  ({check.how})")
                print("  described:           " + format_summary(check.original))
            print(f"  fitted, {label + ':':20s} " + format_summary(check.fitted))

        choice = choose(system, bags, names, groups, seconds, args.impose, progress=report, **common)
        print("  " + choice.verdict())
        final = groups if choice.chosen is None else choice.chosen
        options = {**common, **{g: g in final for g in ("thrust", "buoyancy", "lag", "delay")}}
        fitted = identify(
            system, bags, bootstrap=args.bootstrap, names=names, prepared=choice.prepared, **options
        )
    except ValueError as exc:
        return error(str(exc))
    title = f"identified from {len(bags)} recording(s)" + (
        " (not used: no fit beats the described parameters)" if choice.chosen is None else ""
    )
    print(format_identification(fitted, title))
    if choice.chosen is None:
        for option, path in (("--identify", args.identify), ("--identified-config", args.identified_config)):
            if path:
                print(f"{option} {path}: not written (the described parameters are kept)")
        return 0
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


def add_replay_command(sub) -> None:
    """The ``replay`` subcommand and its options."""
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
    rep.add_argument("--dt", type=time_step, default=0.005, help="integration step, s (default 0.005)")
    rep.add_argument(
        "--window",
        type=number_in(0.0, 3600.0, "a window", "s"),
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
        "--no-surface",
        action="store_true",
        help="replay in deep water, without the description's free surface (when the recording's "
        "z = 0 is not the water level, as in the tank runs of docs/validation.md)",
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
        type=number_in(0, 10000, "a count", closed=True, kind=int),
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
