"""Did-you-mean hints: the one way gov names the spellings a user probably meant
(unknown settings, changelog fields, config keys, runner labels)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence

CUTOFF = 0.6  # difflib's similarity ratio below which a candidate is not offered


def _code(word: str) -> str:
    return f"`{word}`"


def close_matches(
    word: str, candidates: Iterable[str], *, limit: int = 3, first: Sequence[str] = ()
) -> list[str]:
    """Up to `limit` candidates that look like `word`, best first; `first`
    (ranked by the caller's own knowledge of the names) goes ahead of them."""
    similar = difflib.get_close_matches(word, list(candidates), n=limit, cutoff=CUTOFF)
    return list(dict.fromkeys([*first, *similar]))[:limit]


def did_you_mean(
    word: str,
    candidates: Iterable[str],
    *,
    limit: int = 3,
    first: Sequence[str] = (),
    quote: Callable[[str], str] = _code,
) -> str:
    """ "did you mean `a` or `b`?", or "" when nothing is close."""
    close = close_matches(word, candidates, limit=limit, first=first)
    if not close:
        return ""
    return "did you mean " + " or ".join(quote(c) for c in close) + "?"
