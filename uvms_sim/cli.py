"""``uvms-sim`` command line: small entry points around the library."""

from __future__ import annotations

import argparse
import sys

import numpy as np

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


def run_sitl(description: str, bind: str, port: int) -> None:
    """Serve SITL until Ctrl-C, printing the frame counters every 10 s."""
    import time

    from .hil.sitl_json import SitlJsonBackend
    from .simulator import Simulator

    backend = SitlJsonBackend(Simulator.from_system(load(resolve(description))), bind=bind, port=port)
    print(f"uvms_sim SITL JSON backend on {bind}:{backend.port}: start ArduSub with --model JSON:{bind}")
    last = time.monotonic()
    try:
        while True:
            backend.serve_once(0.5)
            if time.monotonic() - last > 10.0:
                c = backend.counters
                print(f"t = {backend.sim.state.t:.1f} s, frames {c.frames}, resends {c.resends}, "
                      f"restarts {c.restarts}, lost {c.lost}, dropped {c.dropped}")  # fmt: skip
                last = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="uvms-sim", description="uvms_sim tools")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("models", help="list the shipped system descriptions (config/*.yaml)")
    check = sub.add_parser(
        "check", help="load a description (.yaml/.urdf/.xacro or a shipped name) and summarise it"
    )
    check.add_argument("description", nargs="+")
    conv = sub.add_parser("convert", help="write a description (e.g. a URDF) as a uvms_sim YAML file")
    conv.add_argument("source")
    conv.add_argument("output")
    conv.add_argument("--overlay", help="YAML overlay with hydrodynamics/thrusters for a URDF")
    sitl = sub.add_parser("sitl", help="be the physics of an ArduSub SITL (--model JSON:127.0.0.1)")
    sitl.add_argument("description", nargs="?", default="bluerov2_heavy")
    sitl.add_argument("--bind", default="127.0.0.1")
    sitl.add_argument("--port", type=int, default=9002)
    hil = sub.add_parser("hil", help="MAVLink HIL with an autopilot board (PX4 HITL; see docs)")
    hil.add_argument("description", nargs="?", default="bluerov2_heavy")
    hil.add_argument("--connection", default="udpin:127.0.0.1:14560", help="pymavlink connection string")
    hil.add_argument("--rate", type=float, default=250.0)
    sub.add_parser("demo", help="run the ROS 2 demo (same as python -m uvms_sim.demo)")
    args = parser.parse_args(argv)
    try:
        if args.command == "models":
            for name, path in shipped_configs().items():
                m = load(path).model
                print(f"{name:26s} bodies={m.nbodies:3d} nq={m.nq:3d} nv={m.nv:3d}  {path}")
        elif args.command == "check":
            for d in args.description:
                print(_summary(d))
        elif args.command == "convert":
            from .model.export import save_yaml

            system = load(resolve(args.source), overlay=args.overlay)
            save_yaml(system, args.output, f"Converted by uvms-sim convert from {args.source}")
            print(f"wrote {args.output}")
        elif args.command == "sitl":
            run_sitl(args.description, args.bind, args.port)
        elif args.command == "hil":
            from .hil.mavlink_hil import MavlinkHil
            from .simulator import Simulator

            bridge = MavlinkHil(Simulator.from_system(load(resolve(args.description))), args.connection)
            print(f"uvms_sim MAVLink HIL on {args.connection} at {args.rate:.0f} Hz (Ctrl-C stops)")
            try:
                bridge.run(args.rate)
            except KeyboardInterrupt:
                pass
            finally:
                bridge.close()
        elif args.command == "demo":
            from . import demo

            demo.main()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
