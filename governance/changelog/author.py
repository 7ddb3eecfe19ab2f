"""Writing entries for the author: `gov add` and `gov check --fix`. Pure: bytes in, bytes out.

* `render_entry` - one well-formed entry (the corpus's key order, `pr-link: XXX`).
* `append_entry` - history's bytes, one empty line, the entry: nothing before the
  end of the file moves.
* `fix_appended` - the mechanical fixes of what a change appended, and only of
  that: trailing spaces and whitespace-only lines, the end of the file (one
  newline), and a placeholder spelled otherwise (`PLACEHOLDER`, `TBD`,
  `.../pull/XXXX`) spliced to the canonical one. History (the base's bytes) is
  never touched; a change that edited history is left as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from governance.changelog.move import move_inserted
from governance.changelog.rules import CheckMode, check
from governance.changelog.splice import LinkEdit, apply_edits, link_edit
from governance.core.links import LinkPolicy, link_text

# A config key or scenario written as a plain YAML scalar; anything else
# (a `*` wildcard: an alias indicator at the start) is double-quoted.
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _scalar(text: str) -> str:
    return text if _PLAIN.fullmatch(text) else _quoted(text)


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are a subset of YAML's)."""
    return json.dumps(text, ensure_ascii=False)


def render_entry(
    config_keys: Sequence[str],
    descriptions: Sequence[str],
    *,
    scenario_types: Sequence[str] = (),
    pr_link: str = "XXX",
) -> bytes:
    """The entry's bytes, ending with one newline."""
    lines = ["- config-keys:", *(f"    - {_scalar(k)}" for k in config_keys)]
    if scenario_types:
        lines += ["  scenario-type:", *(f"    - {_scalar(s)}" for s in scenario_types)]
    lines += ["  description:", *(f"    - {_quoted(d)}" for d in descriptions)]
    lines.append(f"  pr-link: {pr_link}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def append_entry(data: bytes, entry: bytes) -> bytes:
    """`data` followed by `entry`, one empty line between (none in an empty file)."""
    if not data.strip():
        return data + entry
    if data.endswith(b"\n\n"):
        return data + entry
    return data + (b"\n" if data.endswith(b"\n") else b"\n\n") + entry


@dataclass(frozen=True, slots=True)
class Fix:
    """One mechanical change: where (1-based line in the result) and what."""

    line: int
    what: str


def fix_appended(
    base: bytes | None, head: bytes, policy: LinkPolicy, *, path: str
) -> tuple[bytes, tuple[Fix, ...]]:
    """(fixed bytes, what changed); `head` unchanged when nothing applies or
    when head does not start with base's bytes (after moving the entries it
    inserted between history's to the end, `move.move_inserted`)."""
    base = base or b""
    moves: list[Fix] = []
    repaired = move_inserted(base, head) if base else None
    if repaired is not None:  # entries inserted mid-history go to the end, bytes unchanged
        head = repaired[0]
        moves = [
            Fix(
                m.new_line,
                f"entry inserted at line {m.line}, in the middle of history, moved to the end",
            )
            for m in repaired[1]
        ]
    if not head.startswith(base) or head == base:
        return head, tuple(moves)
    data, fixes = _fix_whitespace(base, head)
    data, links = _fix_placeholders(base, data, policy, path)
    return data, (*moves, *fixes, *links)


def _fix_whitespace(base: bytes, head: bytes) -> tuple[bytes, list[Fix]]:
    suffix = head[len(base) :]
    whole_lines = not base or base.endswith(b"\n")
    first_line = base.count(b"\n") + 1
    fixes: list[Fix] = []
    if base.endswith(b"\n") and suffix.lstrip(b"\n").startswith(b"- config-keys:"):
        # One empty line between history and the new entries (GOV305); history's
        # own last line may be whitespace-only, and it stays.
        lead = b"" if base.endswith(b"\n\n") else b"\n"
        if not suffix.startswith(lead + b"- config-keys:"):
            suffix = lead + suffix.lstrip(b"\n")
            fixes.append(Fix(first_line, "one empty line between history and the new entries"))
    parts = suffix.split(b"\n")
    for index, part in enumerate(parts):
        if index == 0 and not whole_lines:
            continue  # the rest of history's last line
        stripped = part.rstrip(b" ")
        if stripped != part:
            parts[index] = stripped
            what = "whitespace-only line emptied" if not stripped else "trailing spaces removed"
            fixes.append(Fix(first_line + index, what))
    body = b"\n".join(parts)
    kept = body.rstrip(b"\n")
    if kept + b"\n" != body and kept.strip():
        last = kept.count(b"\n") + first_line
        fixes = [fix for fix in fixes if fix.line <= last]
        fixes.append(Fix(last, "the file ends with one newline"))
        body = kept + b"\n"
    return base + body, fixes


def _fix_placeholders(
    base: bytes, head: bytes, policy: LinkPolicy, path: str
) -> tuple[bytes, list[Fix]]:
    verdict = check(base or None, head, policy, CheckMode(), path=path)
    if verdict.head is None:
        return head, []
    wanted = sorted(policy.placeholder_set(), key=len)[0]  # `XXX` with the defaults
    edits: list[LinkEdit] = []
    for entry in verdict.additions:
        link = link_text(entry.pr_link)
        if policy.is_placeholder(link) or not policy.looks_like_placeholder(link):
            continue
        edit = link_edit(verdict.head, entry, wanted, link)
        if isinstance(edit, LinkEdit):
            edits.append(edit)
    if not edits:
        return head, []
    data, rewrites = apply_edits(head, edits)
    return data, [Fix(r.line, f"pr-link {r.old} -> {r.new}") for r in rewrites]
