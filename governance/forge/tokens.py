"""Tokens: stripped and validated before use, redacted in every form.

A token read from a CRLF file ends in `\\r`; sent as is, httpx raises
`Illegal header value b'Bearer ghp_…\\r'` with the token escaped, past a
plain-text redaction. So a token is stripped, refused if anything but token
characters remain (never shown), and `redact` scrubs its plain, escaped and
percent-encoded forms from any message.

`take_tokens()` runs before any command: GH_TOKEN and GITHUB_TOKEN move from
the process environment into gov's memory, so no child (git, a launch
script, sbatch) inherits them, and on Linux their values are overwritten in
the process's initial environment block too, which `/proc/<gov's pid>/environ`
shows to any process of the same user (a launch script reading its parent's).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
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


FORGE_TOKENS = ("GH_TOKEN", "GITHUB_TOKEN")
# The tokens `take_tokens` moved out of the environment, by name.
_TAKEN: dict[str, str] = {}


def take_tokens(environ: MutableMapping[str, str] | None = None) -> None:
    """Move gov's forge tokens out of `environ` (the process environment)
    into gov's memory, where `token_from_env()` still finds them (what an
    earlier call took is forgotten: one command, one environment)."""
    env = os.environ if environ is None else environ
    _TAKEN.clear()
    present = [name for name in FORGE_TOKENS if name in env]
    if not present:
        return
    if env is os.environ:
        _scrub_initial_environment(present)
    for name in present:
        _TAKEN[name] = env.pop(name)


def _scrub_initial_environment(names: list[str]) -> None:
    """Overwrite the values of `names` in the C environment (Linux: the block
    `/proc/self/environ` reads), before `os.environ.pop` unlinks them."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
        prefixes = tuple(f"{name}=".encode() for name in names)
        index = 0
        while (address := entries[index]) is not None:
            index += 1
            text = ctypes.string_at(address)
            prefix = next((p for p in prefixes if text.startswith(p)), None)
            if prefix is not None:
                ctypes.memset(address + len(prefix), 0, len(text) - len(prefix))
    except (OSError, AttributeError, ValueError):
        pass  # no C environment to reach: the children still never inherit them


def token_from_env(env: Mapping[str, str] | None = None) -> str | None:
    env = {**_TAKEN, **os.environ} if env is None else env
    for name in FORGE_TOKENS:
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
