"""The shell scanner: engine invocations, flags and values, and the warning rule (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.sweeps.flagindex import build_index, flag_warnings, focused_index
from governance.sweeps.shellscan import flag_uses
from governance.sweeps.shellwords import commands
from tests.harness import clone_scripts_bundle


def uses(text: str) -> list[tuple[str, str, str, int, int]]:
    return [(u.engine, u.flag, u.value, u.line, u.column) for u in flag_uses(text.encode())]


def test_continuations_quotes_and_equals_forms() -> None:
    text = (
        "#!/bin/bash\n"
        "vllm serve $MODEL --port 8000 \\\n"
        "  --kv-cache-dtype 'fp8' \\\n"
        '  --quantization="fp8" --trust-remote-code \\\n'
        '  --max-model-len "$LEN" > "$LOG" 2>&1 &\n'
    )
    assert uses(text) == [
        ("vllm", "port", "8000", 2, 26),
        ("vllm", "kv-cache-dtype", "fp8", 3, 20),
        ("vllm", "quantization", "fp8", 4, 18),
    ]


def test_engines_by_module_by_array_and_inside_a_quoted_command() -> None:
    text = (
        'ARGS=(--tp "$TP"\n  --attention-backend aiter)\n'
        '"$PY" -m sglang.launch_server --model-path x "${ARGS[@]}" --mem-fraction-static 0.8\n'
        'CMD=(\n  mpirun -n 1\n  trtllm-serve "$M"\n  --backend pytorch\n)\n'
        'DECODE="FOO=1 python3 -m vllm.entrypoints.openai.api_server --block-size 64 --dtype auto"\n'
    )
    found = uses(text)
    assert ("sglang", "attention-backend", "aiter", 2, 23) in found
    assert ("sglang", "model-path", "x", 3, 44) in found
    assert ("trtllm", "backend", "pytorch", 7, 13) in found
    assert ("vllm", "dtype", "auto", 9, 85) in found


def test_comments_heredocs_and_other_commands_are_not_engine_flags() -> None:
    text = (
        "# vllm serve --quantization fp8\n"
        "cat > config.yml <<EOF\nvllm serve --quantization nope\nEOF\n"
        'echo "vllm serve --quantization quoted"\n'
        "python3 bench.py --quantization fp8\n"
    )
    assert uses(text) == []
    assert [w.text for w in commands("a 'b c' \"d$e\"; f\n")[0]] == ["a", "b c", "d$e"]


def test_a_value_only_another_engine_uses_is_warned_at_its_place() -> None:
    scripts = {
        "s/a_vllm.sh": b"vllm serve m --quantization deepseek_v4_fp8\n",
        "s/b_sglang.sh": b"sglang serve --quantization fp8\n",
        "s/c_sglang.sh": b"sglang serve \\\n    --quantization deepseek_v4_fp8\n",
    }
    index = build_index(scripts)
    warned = flag_warnings(scripts["s/c_sglang.sh"], index, frozenset({"s/c_sglang.sh"}))
    assert [(w.use.line, w.use.column, w.other_engine) for w in warned] == [(2, 20, "vllm")]
    assert "s/a_vllm.sh:1:29" in warned[0].message()
    assert "fp8" in warned[0].hint()
    # Seen with its own engine elsewhere: no warning; numbers are never warned.
    assert flag_warnings(scripts["s/b_sglang.sh"], index, frozenset({"s/b_sglang.sh"})) == []
    numbers = build_index({"v.sh": b"vllm serve --max-num-seqs 17\n"})
    assert flag_warnings(b"sglang serve --max-num-seqs 3\n", numbers) == []


def test_a_flag_whose_values_two_engines_share_is_common_vocabulary() -> None:
    scripts = {
        "v1.sh": b"vllm serve --reasoning-parser glm45\n",
        "s1.sh": b"sglang serve --reasoning-parser glm45\n",
        "s2.sh": b"sglang serve --reasoning-parser qwen3\n",
    }
    index = build_index(scripts)
    assert flag_warnings(b"vllm serve --reasoning-parser qwen3\n", index) == []


ALPHABET = "vllm sglang serve trtllm-serve python3 -m --quantization = fp8 $ { } ( ) [ ] @ \" ' \\ \n # ; & | < > EOF `"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*ALPHABET.split(" "), " ", "\n", "<<EOF\n", "\\\n"]), max_size=60))
def test_any_text_is_scanned_without_error_and_in_place(parts: list[str]) -> None:
    text = "".join(parts)
    for use in flag_uses(text.encode()):
        lines = text.split("\n")
        assert 1 <= use.line <= len(lines) and 1 <= use.column <= len(lines[use.line - 1]) + 1


# -- the focused index answers every question as the index of all scripts does --------

ENGINES = ["vllm serve", "sglang serve", "python3 -m sglang.launch_server", "trtllm-serve"]
FLAGS = [
    "--quantization",
    "--Quant_ization",
    '--quant"ization"',
    "--kv-cache-dtype",
    "--kv_cache_dtype",
]
VALUES = [
    *["fp8", '"fp8"', "f\\p8", "'fp'8", "fp\\\n8", "FP8", "é8"],  # one value, spelled many ways
    *["int4", "awq", "gptq", "bf16", "modelopt_fp4"],  # values other scripts share or not
]


def _warnings(data: bytes, index: object, exclude: frozenset[str]) -> list[tuple[object, ...]]:
    found = flag_warnings(data, index, exclude)  # type: ignore[arg-type]
    return [(w.use, w.other_engine, w.other_places, w.engine_values) for w in found]


def _same_answers(scripts: dict[str, bytes], checked: list[str], changed: frozenset[str]) -> None:
    every = build_index(scripts)
    reviewed = {path: flag_uses(scripts[path]) for path in checked}
    focused = focused_index(scripts, reviewed, changed)
    for path in checked:
        exclude = changed | {path}
        assert _warnings(scripts[path], focused, exclude) == _warnings(
            scripts[path], every, exclude
        ), path


script_text = st.lists(
    st.tuples(st.sampled_from(ENGINES), st.sampled_from(FLAGS), st.sampled_from(VALUES)),
    min_size=1,
    max_size=3,
).map(lambda lines: "".join(f"{e} {f} {v} --port 8000\n" for e, f, v in lines))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(script_text, min_size=1, max_size=10),
    st.data(),
)
def test_the_focused_index_gives_every_script_the_warnings_of_the_full_index(
    texts: list[str], data: st.DataObject
) -> None:
    scripts = {f"s{k}.sh": text.encode() for k, text in enumerate(texts)}
    checked = data.draw(
        st.lists(st.sampled_from(sorted(scripts)), min_size=1, max_size=2, unique=True)
    )
    changed = frozenset(data.draw(st.lists(st.sampled_from(sorted(scripts)), unique=True)))
    _same_answers(scripts, checked, changed)


def test_the_focused_index_on_the_real_scripts(tmp_path_factory: pytest.TempPathFactory) -> None:
    clone = clone_scripts_bundle(tmp_path_factory)
    scripts = {
        path.relative_to(clone).as_posix(): path.read_bytes()
        for path in sorted((clone / "benchmarks").rglob("*.sh"))
    }
    assert len(scripts) > 100
    sample = sorted(scripts)[::9]  # every ninth: each engine and folder, in a few seconds
    for path in sample:
        _same_answers(scripts, [path], frozenset())


GAPPY = [
    "q",
    "u",
    "a",
    "n",
    "t",
    "-",
    "_",
    "Q",
    "8",
    "f",
    "p",
    "'",
    '"',
    "\\",
    "\\\n",
    "\n",
    " ",
    "é",
]


@settings(max_examples=400, deadline=None)
@given(
    data=st.lists(st.sampled_from(GAPPY), max_size=40).map(lambda p: "".join(p).encode()),
    words=st.lists(
        st.tuples(
            st.sampled_from(["quant", "fp8", "qua-nt", "f", "Fp8", "a_n", "q'u"]), st.booleans()
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_the_squeezed_lookup_answers_as_the_gapped_patterns(
    data: bytes, words: list[tuple[str, bool]]
) -> None:
    import re

    from governance.sweeps.flagindex import _could_hold, _spelling

    by_pattern = re.compile(b"|".join(_spelling(t, f) for t, f in words), re.IGNORECASE)
    expected = not data.isascii() or by_pattern.search(data) is not None
    assert _could_hold(words)(data) == expected
