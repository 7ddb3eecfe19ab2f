"""The pr-link policy: what counts as a placeholder, a canonical link, and the
expected link for PR N. One `LinkPolicy` object is shared by every door
(hook, CI check, merge tool), so a link can never pass in one and fail in
another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

DEFAULT_REPOSITORY = "SemiAnalysisAI/InferenceX"
DEFAULT_LINK_TEMPLATE = "https://github.com/{repository}/pull/{number}"
DEFAULT_PLACEHOLDERS = ("XXX", "https://github.com/{repository}/pull/XXX")
# A PR number longer than this is not a PR number (and Python refuses to
# convert decimals over 4,300 digits).
MAX_PR_DIGITS = 12


class LinkKind(Enum):
    PLACEHOLDER = "placeholder"
    CANONICAL = "canonical"  # template with a plain decimal number >= 1
    # Matches the reference's `\d+` but not plain ASCII decimal: non-ASCII
    # digits (`٩٥`), leading zeros (`00095`), zero, or more than
    # MAX_PR_DIGITS digits. The reference accepts these as canonical; gov
    # does not (GOV405).
    LOOSE_NUMBER = "loose-number"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class LinkPolicy:
    repository: str = DEFAULT_REPOSITORY
    link_template: str = DEFAULT_LINK_TEMPLATE
    placeholders: tuple[str, ...] = DEFAULT_PLACEHOLDERS
    # Former names of the repository whose links also count as canonical:
    # only in a history replay (`gov audit`), never for a new link.
    former: tuple[str, ...] = ()
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if "{number}" not in self.link_template:
            raise ValueError("link-template must contain {number}")
        alternatives = []
        for name in (self.repository, *self.former):
            head, _, tail = self.link_template.format(repository=name, number="\0").partition("\0")
            # `\d+` (Unicode digits) on purpose: the loose matches are
            # classified separately so the user gets a precise message.
            alternatives.append(re.escape(head) + r"(\d+)" + re.escape(tail))
        object.__setattr__(self, "_pattern", re.compile("|".join(alternatives)))

    def _digits(self, link: str) -> str | None:
        match = self._pattern.fullmatch(link)
        if match is None:
            return None
        return next(group for group in match.groups() if group is not None)

    def expected(self, number: int) -> str:
        return self.link_template.format(repository=self.repository, number=number)

    def placeholder_set(self) -> frozenset[str]:
        return frozenset(p.format(repository=self.repository) for p in self.placeholders)

    def is_placeholder(self, link: str) -> bool:
        return link in self.placeholder_set()

    def classify(self, link: str) -> LinkKind:
        if self.is_placeholder(link):
            return LinkKind.PLACEHOLDER
        digits = self._digits(link)
        if digits is None:
            return LinkKind.OTHER
        if digits.isascii() and digits[0] != "0" and len(digits) <= MAX_PR_DIGITS:
            return LinkKind.CANONICAL
        return LinkKind.LOOSE_NUMBER

    def number(self, link: str) -> int | None:
        """The PR number of a canonical link (None for anything else)."""
        if self.classify(link) is not LinkKind.CANONICAL:
            return None
        digits = self._digits(link)
        assert digits is not None
        return int(digits)

    def looks_like_placeholder(self, link: str) -> bool:
        """Near-misses of a placeholder (`PLACEHOLDER`, `.../pull/XXXX`, `TBD`):
        used only to word hints, never to accept anything."""
        tail = link.rsplit("/", 1)[-1].strip().upper()
        return tail in {"XXX", "XXXX", "XX", "X", "PLACEHOLDER", "TBD", "TODO", "N/A", "NA", ""}


def link_text(raw: object) -> str:
    """A pr-link value as the rules see it: missing or null becomes ''."""
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else str(raw)


# A `pr-link:` line holding a GitHub pull-request link: ORG/NAME is group 1.
_PULL_LINK = re.compile(
    rb"^  pr-link: *[\"']?https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/[0-9]+",
    re.MULTILINE,
)


def repository_from_links(data: bytes, window: int = 50) -> str | None:
    """The repository a changelog belongs to, as its own links say: the most
    frequent ORG/NAME among its last `window` pull-request links (links to
    other projects' PRs are the minority); a tie goes to the most recent."""
    # Appended entries sit at the end: the tail usually holds enough links.
    recent = [m.group(1) for m in _PULL_LINK.finditer(data, max(0, len(data) - 65536))]
    if len(recent) < window:
        recent = [m.group(1) for m in _PULL_LINK.finditer(data)]
    recent = recent[-window:]
    if not recent:
        return None
    counts: dict[bytes, int] = {}
    for slug in recent:
        counts[slug] = counts.get(slug, 0) + 1
    best = max(counts.values())
    slug = next(s for s in reversed(recent) if counts[s] == best)
    return slug.decode("ascii")
