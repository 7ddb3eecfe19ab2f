"""Serving-engine flags in launch scripts: script bytes in, flag uses out (pure).

Each command's words (`shellwords`) are searched for a serving engine
(`vllm serve`, `sglang serve`, `python3 -m sglang.launch_server`,
`trtllm-serve`, `atom serve`, ...); the `--flag value` / `--flag=value`
pairs after it whose value is a literal (no expansion) are reported with
their 1-based line and column. `flagindex` compares them across scripts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.sweeps.shellwords import Word


ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "atom": "ATOM"}
# `python -m MODULE` modules that start a server, by engine.
_MODULES = (
    ("sglang.launch_server", "sglang"),
    ("vllm.entrypoints.", "vllm"),
    ("atom.entrypoints.", "atom"),
    ("tensorrt_llm.serve", "trtllm"),
)
# A quoted command kept in a variable (`CMD="... python3 -m sglang.launch_server ..."`).
_ENGINE_TEXT = re.compile(r"\b(?:vllm|sglang|atom) serve\b|trtllm-serve|-m (?:sglang|vllm|atom)\.")
_ENGINE_NAMES = ("vllm", "sglang", "atom", "trtllm-serve")


@dataclass(frozen=True, slots=True)
class FlagUse:
    engine: str  # vllm | sglang | trtllm | atom
    flag: str  # normalised: no leading dashes, `_` as `-`
    spelled: str  # as written, e.g. `--quantization`
    value: str
    line: int
    column: int


def _engine_at(words: Sequence[Word], k: int) -> tuple[str, int] | None:
    """(engine, index of the first argument) when an engine starts at word k."""
    word = words[k]
    if word.op:
        return None
    after = words[k + 1].text if k + 1 < len(words) else ""
    if after == "-m" and k + 2 < len(words):  # `python3 -m MODULE`, `"$PY" -m MODULE`
        module = words[k + 2].text
        for prefix, engine in _MODULES:
            if module == prefix or (prefix.endswith(".") and module.startswith(prefix)):
                return engine, k + 3
    if word.dynamic or word.op:
        return None
    name = word.text.rsplit("/", 1)[-1]
    if name in ("vllm", "sglang", "atom") and after == "serve":
        return name, k + 2
    if name == "trtllm-serve":
        return "trtllm", k + 2 if after == "serve" else k + 1
    return None


def _normal(flag: str) -> str:
    return flag.lstrip("-").replace("_", "-").lower()


def flag_uses(data: bytes) -> list[FlagUse]:
    """Every literal `--flag value` given to a serving engine in a script,
    including commands kept in a double-quoted variable (`CMD="vllm serve ..."`)."""
    text = data.decode("utf-8", "replace")
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    # The lexer (a large regular expression) is compiled only when a script's
    # uses are not remembered (`check.flag_cache`): a hook after an edit of
    # the changelog lexes nothing.
    from governance.sweeps.shellwords import commands

    out: list[FlagUse] = []
    pending = [(text, 0)]
    while pending:
        source, base = pending.pop()
        lexed = commands(source)
        arrays = _arrays(lexed)
        for words in lexed:
            out.extend(_command_uses(_spliced(words, arrays), base, where))
            for word in words:  # quoted command lines: lexed again, in place
                if word.value_start >= 0 and word.end > 0 and _ENGINE_TEXT.search(word.text):
                    raw = source[word.value_start : word.end]
                    if raw.startswith('"') and raw.endswith('"') and len(raw) > 1:
                        pending.append((raw[1:-1], base + word.value_start + 1))
    # An array expanded in several commands yields its words once.
    return sorted(set(out), key=lambda use: (use.line, use.column, use.flag))


_ARRAY_USE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}")


def _arrays(lexed: Sequence[Sequence[Word]]) -> dict[str, list[Word]]:
    """NAME -> the words assigned to array NAME (`NAME=(...)`, `NAME+=(...)`)."""
    out: dict[str, list[Word]] = {}
    for words in lexed:
        k = 0
        while k < len(words):
            word = words[k]
            k += 1
            if word.op or not word.text.endswith("=(") or word.dynamic:
                continue
            name = word.text[:-2].removesuffix("+")
            body = out.setdefault(name, []) if word.text.endswith("+=(") else []
            out[name] = body
            while k < len(words) and not (words[k].op and words[k].text == ")"):
                body.append(words[k])
                k += 1
    return out


def _spliced(words: Sequence[Word], arrays: Mapping[str, list[Word]]) -> list[Word]:
    """`"${ARGS[@]}"` replaced by the words assigned to ARGS (once, no recursion)."""
    out: list[Word] = []
    for word in words:
        match = _ARRAY_USE.fullmatch(word.text) if word.dynamic else None
        out.extend(arrays.get(match.group(1), []) if match else [word])
    return out


def _command_uses(
    words: Sequence[Word], base: int, where: Callable[[int], tuple[int, int]]
) -> list[FlagUse]:
    out: list[FlagUse] = []
    last = len(words) - 1
    for k, word in enumerate(words):
        # Only a word named like an engine, or one before `-m`, can start one.
        if not word.text.endswith(_ENGINE_NAMES) and (k == last or words[k + 1].text != "-m"):
            continue
        found = _engine_at(words, k)
        if found is None:
            continue
        engine, j = found
        while j < len(words) and not words[j].op:
            word = words[j]
            j += 1
            if not word.text.startswith("--") or len(word.text) < 3:
                continue
            if word.value_start >= 0:  # --flag=value
                name, _, value = word.text.partition("=")
                if not word.value_dynamic and value:
                    out.append(
                        FlagUse(engine, _normal(name), name, value, *where(base + word.value_start))
                    )
                continue
            if word.dynamic:
                continue
            nxt = words[j] if j < len(words) else None
            if nxt is None or nxt.op or nxt.text.startswith("-"):
                continue  # a switch
            j += 1
            if not nxt.dynamic and nxt.text:
                out.append(
                    FlagUse(
                        engine, _normal(word.text), word.text, nxt.text, *where(base + nxt.start)
                    )
                )
        break  # one engine per command
    return out
