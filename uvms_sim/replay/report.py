"""The replay tool's outputs: a printed table and a plot of predicted against recorded motion."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .bag import BagContents


def format_table(table: dict[str, dict[str, float]]) -> str:
    lines = [f"{'quantity':10s} {'RMSE':>10s} {'DTW':>10s} {'Pearson R':>10s}"]
    for key, row in table.items():
        lines.append(f"{key:10s} {row['rmse']:10.4f} {row['dtw']:10.4f} {row['pearson_r']:10.4f}")
    return "\n".join(lines)


def plot(path: str | Path, t: np.ndarray, predicted: np.ndarray, measured: np.ndarray | None) -> Path:
    """Plan view (ENU) and depth, speed against time: predicted and, if any, recorded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, az, av) = plt.subplots(1, 3, figsize=(14, 4.5))
    for rows, label, style in ((predicted, "model", "-"), (measured, "recorded", "--")):
        if rows is None or not len(rows):
            continue
        ax.plot(rows[:, 0], rows[:, 1], style, label=label)
        az.plot(t[: len(rows)], -rows[:, 2], style, label=label)
        av.plot(t[: len(rows)], np.linalg.norm(rows[:, 7:10], axis=1), style, label=label)
    ax.set_xlabel("x east [m]")
    ax.set_ylabel("y north [m]")
    ax.set_aspect("equal", adjustable="datalim")
    az.set_xlabel("t [s]")
    az.set_ylabel("depth [m]")
    az.invert_yaxis()
    av.set_xlabel("t [s]")
    av.set_ylabel("speed [m/s]")
    for a in (ax, az, av):
        a.grid(True)
        a.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def describe(path: str, bag: BagContents, motors: set[int] | None = None) -> list[str]:
    """What a recording holds and what of it is used, one fact per line (the replay's
    opening report); ``motors``: the description's motor numbers, to name those the
    recording never commands."""
    n_cmd, n_odo = len(bag.commands.t) + len(bag.overrides.t), len(bag.odometry.t)
    motion = {"pose": "poses (velocities differentiated)", "odometry": "odometry"}.get(
        bag.motion_source, bag.motion_source
    )
    lines = [
        f"{path} ({bag.format}): {n_cmd} commands on {bag.command_topic}, "
        f"{n_odo} {motion} on {bag.odometry_topic}"
    ]
    if bag.command_source == "rc_override":
        states = (
            f"{len(bag.autopilot_states.t)} on {bag.state_topic}"
            if bag.state_topic
            else "none: armed, MANUAL"
        )
        lines.append(
            f"  no PWM topic: RC override flown through the emulated ArduSub (mavros State: {states})"
        )
    for topic, count in bag.ignored.items():
        lines.append(f"  not used: {count} messages on {topic}")
    if bag.out_of_order:
        lines.append(f"  {bag.out_of_order} messages with out-of-order stamps (sorted before use)")
    lines.append(f"  largest gap between commands: {bag.largest_gap:.3f} s")
    if bag.parameters:
        frame = f"FRAME_CONFIG {bag.frame}" if bag.frame else "no FRAME_CONFIG"
        rev = (
            "not recorded"
            if bag.reversed_motors is None
            else ", ".join(map(str, sorted(bag.reversed_motors)))
        )
        rev = rev or "none"
        lines.append(
            f"  {len(bag.parameters)} parameters: {frame}; reversed motors (MOT_n_DIRECTION = -1): {rev}"
        )
    if bag.imu.t:
        lines.append(f"  IMU: {len(bag.imu.t)} samples")
    if bag.battery.t:
        lines.append(
            f"  battery: median {float(np.median(bag.battery.values)):.2f} V "
            f"over {len(bag.battery.t)} samples"
        )
    if not bag.horizontal:
        lines.append(
            "  no horizontal velocity measurement (no GPS, DVL or external navigation in the EKF): "
            "u and v are "
            "not compared"
        )
    if motors is not None and bag.commands.t:
        commanded = np.any(bag.commands.arrays()[1] > 0.0, axis=0)
        silent = sorted(m for m in motors if m > len(commanded) or not commanded[m - 1])
        if silent:
            lines.append(
                f"  motor(s) {', '.join(map(str, silent))} of the description get no output in the recording "
                "(no servo with that motor function): they stay at neutral"
            )
    lines += [f"  note: {n}" for n in bag.notes]
    return lines


def _error(se: float) -> str:
    """A standard error as printed: never a bare 0 or nan."""
    return f"{se:.4g}" if np.isfinite(se) and se > 0.0 else "not estimated"


def format_identification(fitted, title: str = "identified") -> str:
    """The fitted values with their standard errors, the bootstrap used and the warnings."""
    lines = [
        f"{title} (value +- standard error; formal / bootstrap in brackets; bootstrap {fitted.bootstrap}):"
    ]
    refused = getattr(fitted, "refused", {})
    for name, (value, se) in fitted.items():
        lines.append(
            f"  {name:22s} = {value:10.4f} +- {_error(se)}  "
            f"({_error(fitted.formal[name])} / {_error(fitted.spread[name])})"
            + (f"  not a result: {refused[name]}" if name in refused else "")
        )
    if hasattr(fitted, "condition"):
        lines.append(f"  condition number of the (equilibrated) Fisher information: {fitted.condition:.3g}")
    lines += [f"  warning: {w}" for w in fitted.warnings]
    return "\n".join(lines)
