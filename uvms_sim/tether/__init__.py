"""A vehicle's tether: a lumped-mass line computed by MoorDyn (``tether.line``) with the
properties of Blue Robotics' Fathom tether (``tether.properties``), coupled both ways to a link
of the vehicle and paid out or reeled in at run time, and the closed forms it is checked
against (``tether.catenary``)."""

from .properties import FATHOM, TetherSpec

__all__ = ["FATHOM", "TetherSpec"]
