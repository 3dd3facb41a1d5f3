"""``uvms-sim`` command line: small entry points around the library."""

from __future__ import annotations

import argparse

from .model.library import MODELS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="uvms-sim", description="uvms_sim tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("models", help="list the built-in models")
    sub.add_parser("demo", help="run the ROS 2 demo (same as python -m uvms_sim.demo)")
    args = parser.parse_args(argv)
    if args.command == "models":
        for name, factory in MODELS.items():
            m = factory()
            print(f"{name:14s} bodies={m.nbodies:3d} nq={m.nq:3d} nv={m.nv:3d}")
    elif args.command == "demo":
        from . import demo

        demo.main()
