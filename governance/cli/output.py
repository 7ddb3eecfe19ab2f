"""Where text leaves gov: stdout and stderr pass through the boundary of the
command's `--format` (`governance.core.safe_text`), so no renderer can forget it.

`boundary(fmt)` wraps both streams for the length of a command (`guarded`
enters it): JSON output gets `\\u001b`-style escapes, the `github` format
has every line made a plain log line (no workflow command, no `\\r`), every
other format (text, markdown, html) shows control characters as
`\\x1b`-style escapes. The only way to print a workflow command is
`command`, which takes lines built by `safe_text.workflow_command`.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from governance.core import safe_text

JSON_FORMATS = ("json", "jsonl")


class _Boundary(io.TextIOBase):
    """A text stream that writes `transform(text)` to `raw`; `by_line`
    holds a partial line back until its end is known (a workflow command
    is recognised per whole line)."""

    def __init__(self, raw: TextIO, transform: Callable[[str], str], *, by_line: bool) -> None:
        super().__init__()
        self.raw = raw
        self._transform = transform
        self._by_line = by_line
        self._pending = ""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def write(self, text: str) -> int:
        if not self._by_line:
            self.raw.write(self._transform(text))
            return len(text)
        whole, sep, rest = (self._pending + text).rpartition("\n")
        self._pending = rest
        if sep:
            self.raw.write(self._transform(whole) + "\n")
        return len(text)

    def finish(self) -> None:
        """Write the held-back partial line."""
        if self._pending:
            pending, self._pending = self._pending, ""
            self.raw.write(self._transform(pending))

    def flush(self) -> None:
        self.raw.flush()

    def close(self) -> None:
        self.finish()
        self.raw.close()
        super().close()

    def __del__(self) -> None:  # collected: the stream under it stays open
        pass


def _transform(fmt: str | None) -> tuple[Callable[[str], str], bool]:
    if fmt in JSON_FORMATS:
        return safe_text.json_text, False
    if fmt == "github":
        return safe_text.workflow_log, True
    return safe_text.terminal, False


@contextlib.contextmanager
def boundary(fmt: str | None) -> Iterator[None]:
    """stdout and stderr through the boundary of `fmt` (re-entrant)."""
    if isinstance(sys.stdout, _Boundary):
        yield
        return
    transform, by_line = _transform(fmt)
    saved = sys.stdout, sys.stderr
    out = _Boundary(saved[0], transform, by_line=by_line)
    errs = _Boundary(saved[1], transform, by_line=by_line)
    sys.stdout, sys.stderr = out, errs
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for stream in (out, errs):
            if not stream.closed:
                with contextlib.suppress(BrokenPipeError, ValueError):
                    stream.finish()


def for_format(fmt: str | None, text: str) -> str:
    """`text` as the boundary of `fmt` writes it (for output to a file)."""
    return _transform(fmt)[0](text)


def raw(stream: TextIO) -> TextIO:
    """The stream under the boundary: for gov's own control output (a
    progress bar's `\\r`), never for a value."""
    return stream.raw if isinstance(stream, _Boundary) else stream


def command(lines: str) -> None:
    """Print workflow commands built by `safe_text.workflow_command` (one a
    line); any other line is printed as a plain log line."""
    target = raw(sys.stdout)
    for line in lines.splitlines():
        if safe_text.is_workflow_command(line):
            target.write(line + "\n")
        else:
            target.write(safe_text.workflow_log(line) + "\n")
