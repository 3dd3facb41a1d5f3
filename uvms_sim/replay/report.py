"""The replay tool's outputs: a printed table and a plot of predicted against recorded motion."""

from __future__ import annotations

from pathlib import Path

import numpy as np


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
