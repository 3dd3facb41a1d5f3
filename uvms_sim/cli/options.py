"""What the ``uvms-sim`` commands share: the refusal of a command line, a parser that takes
options and positional arguments in any order, and argparse types of numbers in a range."""

from __future__ import annotations

import argparse
import datetime as dt
import sys


def error(message: str) -> int:
    """Say what is wrong on standard error; the exit status of a refused command line (2)."""
    print(f"error: {message}", file=sys.stderr)
    return 2


class IntermixedParser(argparse.ArgumentParser):
    """A subcommand's parser that takes its options and positional arguments in any order
    (``record OUT --duration 3 odom``), as ``parse_intermixed_args`` does."""

    _mixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._mixing:  # parse_known_intermixed_args calls this twice, for each kind
            return super().parse_known_args(args, namespace)
        self._mixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._mixing = False


def number_in(lo: float, hi: float, what: str, unit: str = "", closed: bool = False, kind: type = float):
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


rate = number_in(0.0, 100000.0, "a rate", "Hz")
time_step = number_in(0.0, 1.0, "a step", "s")
duration = number_in(0.0, 1.0e7, "a duration", "s", closed=True)  # 0: no limit
count = number_in(0, 10**9, "a count", closed=True, kind=int)
port = number_in(0, 65535, "a port", closed=True, kind=int)
speed = number_in(0.0, 1000.0, "a real-time factor", closed=True)  # 0: no limit


def iso_date(text: str) -> dt.date:
    """An argparse type: a date as YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date as YYYY-MM-DD") from None
