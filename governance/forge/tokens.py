"""Tokens: stripped and validated before use, redacted in every form.

A token read from a CRLF file ends in `\\r`; sent as is, httpx raises
`Illegal header value b'Bearer ghp_…\\r'` with the token escaped, past a
plain-text redaction. So a token is stripped, refused if anything but token
characters remain (never shown), and `redact` scrubs its plain, escaped and
percent-encoded forms from any message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote

from governance.forge.base import ForgeError

# What a GitHub token is made of (classic, fine-grained, app and OAuth tokens).
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=")


def clean_token(raw: str | None, name: str = "the token") -> str | None:
    """The token with surrounding whitespace stripped (a CRLF token file
    leaves `\r`); refused (exit 2, the token never shown) when what is left
    holds anything a token cannot: it would otherwise land in an error message."""
    if raw is None:
        return None
    token = raw.strip()
    if not token:
        return None
    if not set(token) <= _TOKEN_CHARS:
        raise ForgeError(
            f"{name} holds characters a GitHub token cannot (whitespace or control "
            f"characters inside, {len(token)} characters); it was not used",
            f"set {name} to the token alone, e.g. `export {name}=$(tr -d '\\r\\n' < token.txt)`",
        )
    return token


def token_from_env(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        token = clean_token(env.get(name), name)
        if token:
            return token
    return None


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced in every form an error may echo it in:
    as is, escaped (repr, bytes repr, JSON), percent-encoded."""
    if not secret:
        return text
    forms = {
        secret,
        repr(secret)[1:-1],
        repr(secret.encode())[2:-1],
        secret.encode("unicode_escape").decode("ascii"),
        quote(secret, safe=""),
    }
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text
