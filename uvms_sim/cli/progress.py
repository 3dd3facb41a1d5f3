"""Progress of a long command on standard error: one line rewritten in place on a terminal, and
in a pipe or a CI log a new line every tenth of the work (and at most every ``every`` seconds
otherwise), so that a log shows progress without one endless line."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``update(done, total, detail)`` as the work goes; ``close()`` ends the line."""

    def __init__(self, what: str, stream: TextIO | None = None, every: float = 30.0) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every
        self.t0 = self.last = time.monotonic()
        self.tenth = -1
        self.written = False

    def update(self, done: int, total: int, detail: str = "") -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        eta = f", about {elapsed / done * (total - done):.0f} s to go" if 0 < done < total else ""
        line = f"{self.what}: {done} of {total}{', ' + detail if detail else ''} ({elapsed:.0f} s{eta})"
        if self.tty:
            self.stream.write("\r\033[K" + line)
            self.written = True
        else:
            tenth = 10 * done // max(total, 1)
            if tenth == self.tenth and now - self.last < self.every and done < total:
                return
            self.tenth, self.last = tenth, now
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.written:
            self.stream.write("\n")
            self.stream.flush()
            self.written = False
