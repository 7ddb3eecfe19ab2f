"""One output boundary per format (docs/security.md, 'Output boundary').

Every value gov prints can come from a PR: a config key, a settings key, a
title, a description, a result row. Each output format has one function
here that makes such text inert for the reader of that format:

* `terminal`: a terminal. C0 controls except `\\n` and `\\t`, DEL and C1
  controls are shown as `\\x1b`-style escapes, so no OSC 52 (clipboard),
  OSC 8 (hyperlink), CSI (cursor, colour) or bare `\\r` reaches it.
* `json_text`: JSON that `ensure_ascii=False` wrote: the same characters as
  `\\u001b`-style escapes, which keeps the document valid.
* `workflow_log`, `workflow_command`: a GitHub Actions log. No printed line
  starts a workflow command (`::` after leading blanks) or holds a legacy
  `##[` one unless gov built it with `workflow_command`, whose values are
  escaped by GitHub's rules (`%`, `\\r`, `\\n`; also `:` and `,` in properties).
* `markdown_text`, `markdown_code`, `html_text`: markdown (the job summary, a PR comment):
  HTML `<`, `>`, `&` become entities; `\\`, backticks, `|` (table
  cells), `$` (math) and the `]` of `](`/`][` (links, images) are
  backslash-escaped, as is what would start a heading, a list or a link
  definition; a line break is a space.

Pure: strings in, strings out. `governance.cli.output` applies the first
three where text is written; the markdown renderers call the last two on
every value a PR controls.
"""

from __future__ import annotations

import re

# C0 except \t (0x09) and \n (0x0a), DEL, C1.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# What json.dumps(ensure_ascii=False) leaves raw: DEL, C1, the Unicode line separators.
_JSON_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def terminal(text: str) -> str:
    """`text` with every control character but `\\n` and `\\t` shown as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_text(text: str) -> str:
    """Serialized JSON with DEL, C1 and U+2028/U+2029 as `\\uNNNN` escapes
    (json.dumps escapes the other controls itself)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# --- GitHub Actions workflow commands -------------------------------------

COMMANDS = frozenset({"error", "warning", "notice", "debug", "group", "endgroup"})
# A line the runner would read as a command: `::` after blanks (it trims
# leading white space first), or a legacy `##[name]` anywhere.
_COMMAND_START = re.compile(r"^(\s*):")
_LEGACY = "##["


def workflow_data(text: str) -> str:
    """A command's message: `%`, `\\r`, `\\n` percent-encoded, other controls shown."""
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal(escaped)


def workflow_property(text: str) -> str:
    """A command's property value: as data, and `:` and `,` encoded too."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str, **properties: object) -> str:
    """One workflow command line (no newline) with every value escaped;
    `name` is one of `COMMANDS`."""
    if name not in COMMANDS:
        raise ValueError(f"not a workflow command gov prints: {name!r}")
    props = ",".join(f"{key}={workflow_property(str(value))}" for key, value in properties.items())
    return f"::{name}{' ' + props if props else ''}::{workflow_data(message)}"


def _log_line(line: str) -> str:
    if line.lstrip().startswith("::"):
        line = _COMMAND_START.sub(lambda m: m.group(1) + "%3A", line, count=1)
    return line.replace(_LEGACY, "#%23[")


def workflow_log(text: str) -> str:
    """`text` as plain log lines: controls shown (so no `\\r` splits a line),
    and no line starts or holds a workflow command."""
    return "\n".join(_log_line(line) for line in terminal(text).split("\n"))


def is_workflow_command(line: str) -> bool:
    """Whether `line` is one command as `workflow_command` builds it."""
    head, sep, _ = line[2:].partition("::")
    name = head.partition(" ")[0]
    return (
        line.startswith("::")
        and bool(sep)
        and name in COMMANDS
        and "\n" not in line
        and not _CONTROL.search(line)
    )


# --- markdown ---------------------------------------------------------------

_MARKDOWN = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    **{char: "\\" + char for char in "\\`|$"},
}
# A link or an image needs `](` or `][` (a bare `[x]` is text without a
# definition, and a definition starts a line): the `]` is escaped there.
_LINK = re.compile(r"\](?=[(\[])")
_MARKDOWN_CHARS = re.compile("[" + re.escape("".join(_MARKDOWN)) + "]")
# What would start a heading, a list, a setext heading or a numbered list
# at a line start (in the middle of a line they are plain text).
_LINE_START = re.compile(r"^(\s*\d*)([-+=.)#*_~\[])")


def markdown_text(text: str) -> str:
    """`text` shown literally in markdown, on one line (fits a table cell)."""
    flat = " ".join(terminal(text).replace("\t", " ").split("\n"))
    escaped = _MARKDOWN_CHARS.sub(lambda m: _MARKDOWN[m.group()], flat)
    escaped = _LINK.sub(r"\\]", escaped)
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped, count=1)


def html_text(text: str) -> str:
    """`text` shown literally inside an HTML block of markdown (where
    backslash escapes do not apply), on one line."""
    flat = " ".join(terminal(text).replace("\t", " ").split("\n"))
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_code(text: str, *, cell: bool = False) -> str:
    """`text` as an inline code span (literal: no HTML, no markdown): a
    fence one backtick longer than any run in `text`; `cell`: inside a
    table cell, where GitHub splits on `|` even in code."""
    flat = " ".join(terminal(text).replace("\t", " ").split("\n"))
    if cell:
        flat = flat.replace("|", "\\|")
    if not flat:
        return "` `"  # `` is no code span
    runs = [len(run) for run in re.findall("`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith(("`", " ")) or flat.endswith(("`", " ")) or runs else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
