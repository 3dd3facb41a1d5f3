"""Reading description files with positions, and a cursor that names where a value sits.

Every mapping and list read from YAML remembers the line of each entry, so an error says
``file:line: key.path: what was expected``. Descriptions built from URDF use the same cursor
with element paths instead of lines.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

MAX_MAGNITUDE = 1.0e12  # no number in a description is larger (SI units)


class ConfigError(ValueError):
    """A description file is wrong: ``file[:line]: key path: what was expected``."""

    def __init__(self, file: str | Path, path: str, message: str, line: int | None = None) -> None:
        self.file = str(file)
        self.path = path
        self.line = line
        self.message = message
        where = self.file if line is None else f"{self.file}:{line}"
        super().__init__(f"{where}: {path or '<top>'}: {message}")


class LineDict(dict):
    """A YAML mapping with the line of each key (``lines``) and of itself (``line``)."""

    line: int | None = None
    lines: dict


class LineList(list):
    """A YAML sequence with the line of each item."""

    line: int | None = None
    lines: list


class _Loader(yaml.SafeLoader):
    pass


# YAML 1.2 floats: PyYAML follows YAML 1.1, where ``1e-5`` (no dot) is a string.
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    seen: dict[Any, int] = {}
    for knode, _ in node.value:
        if knode.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(knode, deep=True)
        if key in seen:
            raise ConfigError(
                loader.name, str(key), f"duplicate key (first on line {seen[key]})", knode.start_mark.line + 1
            )
        seen[key] = knode.start_mark.line + 1
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.lines = {}
    for knode, vnode in node.value:
        key = loader.construct_object(knode, deep=True)
        out[key] = loader.construct_object(vnode, deep=True)
        out.lines[key] = knode.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.lines = [child.start_mark.line + 1 for child in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file keeping line numbers; syntax errors become ConfigError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text (byte {exc.start}): is this a description?") from None
    return parse_yaml(text, path)


def parse_yaml(text: str, path: str | Path, max_nodes: int | None = None) -> Any:
    """Parse YAML ``text`` (named ``path`` in errors) as ``read_yaml`` does; a document of more
    than ``max_nodes`` values once its aliases are expanded (default ``MAX_NODES``) is refused
    without being expanded."""
    limit = MAX_NODES if max_nodes is None else max_nodes
    try:
        loader = _Loader(text)  # refuses characters YAML does not allow (NUL, most controls)
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", f"not valid YAML: {getattr(exc, 'reason', None) or exc}") from None
    loader.name = str(path)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, {})
        if size > limit:
            raise ConfigError(
                path, "", f"{size:.3g} values once its aliases are expanded (at most {limit:g})"
            )
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(path, "", f"not valid YAML: {problem}", line) from None
    except RecursionError:
        raise ConfigError(path, "", "nested too deeply") from None
    except TypeError as exc:  # e.g. a list or mapping used as a mapping key
        raise ConfigError(path, "", f"not a description: {exc}") from None
    finally:
        loader.dispose()


MAX_NODES = 1_000_000  # values in a description, aliases expanded (a "billion laughs" stops here)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many nodes the document has with every alias expanded (shared nodes counted at
    each use), without expanding it."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = MAX_NODES + 1  # a cycle: too large
    if isinstance(node, yaml.SequenceNode):
        n = 1 + sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        n = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    else:
        n = 1
    memo[key] = min(n, 10 * MAX_NODES)
    return memo[key]


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, str):
        return f"the text {value!r}"
    return repr(value)


class Cursor:
    """A value in a description and where it is (file, key path, line)."""

    def __init__(self, value: Any, file: str | Path, path: str = "", line: int | None = None) -> None:
        self.value = value
        self.file = str(file)
        self.path = path
        self.line = line

    def error(self, message: str) -> ConfigError:
        return ConfigError(self.file, self.path, message, self.line)

    # -- navigation ---------------------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def get(self, key: str) -> Cursor | None:
        return self[key] if key in self else None

    def __getitem__(self, key: str) -> Cursor:
        lines = getattr(self.value, "lines", {})
        path = f"{self.path}.{key}" if self.path else key
        return Cursor(self.value[key], self.file, path, lines.get(key, self.line))

    def items(self) -> list[tuple[str, Cursor]]:
        return [(k, self[k]) for k in self.value]

    def seq(self, what: str = "a list") -> list[Cursor]:
        if not isinstance(self.value, list):
            raise self.error(f"expected {what}, got {_type_name(self.value)}")
        lines = getattr(self.value, "lines", [self.line] * len(self.value))
        out = []
        for i, item in enumerate(self.value):
            label = item.get("name") if isinstance(item, dict) else None
            tag = label if isinstance(label, str) and label else str(i)
            out.append(Cursor(item, self.file, f"{self.path}[{tag}]", lines[i]))
        return out

    # -- checks ---------------------------------------------------------------------------
    def mapping(self, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()) -> Cursor:
        """Check this is a mapping with exactly the allowed keys; returns self."""
        if not isinstance(self.value, dict):
            raise self.error(
                f"expected a mapping with keys {list(required + optional)}, got {_type_name(self.value)}"
            )
        allowed = required + optional
        for key in self.value:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                also = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise self[key].error(f"unknown key{also}; allowed here: {sorted(allowed)}")
        for key in required:
            if key not in self.value:
                raise self.error(f"missing required key {key!r}")
        return self

    def where(self) -> str:
        """``file:line: key.path`` of this value (for warnings)."""
        line = "" if self.line is None else f":{self.line}"
        return f"{self.file}{line}: {self.path or '<top>'}"

    def keys(self) -> tuple:
        """The keys of this mapping (none for an empty entry); an error naming it otherwise."""
        if self.value is None:
            return ()
        if not isinstance(self.value, dict):
            raise self.error(f"expected a mapping, got {_type_name(self.value)}")
        return tuple(self.value)

    def text(self) -> str:
        if not isinstance(self.value, str) or not self.value:
            raise self.error(f"expected a non-empty text, got {_type_name(self.value)}")
        return self.value

    def choice(self, options: Sequence[str] | Mapping[str, str]) -> str:
        """This text if it is one of ``options`` (a mapping gives each option's meaning, written into
        the error); an error listing them otherwise."""
        if isinstance(self.value, str) and self.value in options:
            return self.value
        if isinstance(options, Mapping):
            said = " or ".join(f"{k!r} ({v})" if v else repr(k) for k, v in options.items())
        else:
            said = f"one of {list(options)}"
        raise self.error(f"expected {said}, got {self.value!r}")

    def boolean(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.error(f"expected true or false, got {_type_name(self.value)}")
        return self.value

    def integer(self, lo: int | None = None) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.error(f"expected an integer, got {_type_name(self.value)}")
        if lo is not None and self.value < lo:
            raise self.error(f"expected an integer >= {lo}, got {self.value}")
        return self.value

    def number(self, lo: float | None = None, positive: bool = False) -> float:
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= 1e308:  # NaN, inf, 2**2000
            raise self.error(f"expected a finite number, got {_type_name(v)}")
        v = float(v)
        if abs(v) > MAX_MAGNITUDE:
            raise self.error(
                f"{v:g} is beyond {MAX_MAGNITUDE:g}: no quantity of a vehicle is that large (a slip?)"
            )
        if positive and not v > 0:
            raise self.error(f"expected a number > 0, got {v}")
        if lo is not None and v < lo:
            raise self.error(f"expected a number >= {lo:g}, got {v}")
        return float(v)

    def vector(self, n: int) -> np.ndarray:
        v = self.value
        if not isinstance(v, list) or len(v) != n:
            raise self.error(f"expected a list of {n} numbers, got {_type_name(v)}")
        return np.array(
            [Cursor(x, self.file, f"{self.path}[{i}]", self.line).number() for i, x in enumerate(v)]
        )

    def matrix(self, rows: int, cols: int) -> np.ndarray:
        v = self.value
        if (
            not isinstance(v, list)
            or len(v) != rows
            or not all(isinstance(r, list) and len(r) == cols for r in v)
        ):
            raise self.error(f"expected {rows} rows of {cols} numbers, got {_type_name(v)}")
        return np.array(
            [Cursor(r, self.file, f"{self.path}[{i}]", self.line).vector(cols) for i, r in enumerate(v)]
        )

    def is_matrix(self) -> bool:
        return (
            isinstance(self.value, list) and bool(self.value) and all(isinstance(r, list) for r in self.value)
        )
