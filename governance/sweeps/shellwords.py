"""A small shell lexer for launch scripts: text in, simple commands as words out (pure).

Enough of the shell for reading launch scripts, not for running them: single
and double quotes, `\\` escapes and line continuations, `$(...)`, `${...}`
and backtick expansions (kept as written, marked dynamic), comments,
heredoc bodies (skipped), array assignments spanning lines (`CMD=( ... )`,
their words stay in the command, closed by a `)` operator word), redirections
(`> log 2>&1` become operator words) and the separators `;`, `&`, `|`,
newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ASSIGN_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=$")
# Characters a word (or a double-quoted string) takes as they are: every
# character the loops below treat specially is excluded (`=` is found in a run).
_PLAIN = re.compile(r"""[^ \t\n;&|<>()\\'"$`]+""")
_PLAIN_DOUBLE = re.compile(r"""[^"\\$`]*""")
# The characters the loop over a `$(...)` or `${...}` passes over one by one.
_IN_PARENS, _IN_BRACES = re.compile(r"""[^\\'"()]*"""), re.compile(r"""[^\\"{}]*""")

# The shortcuts: patterns that end where the loops below would, on the shapes
# most words of a launch script have; anything else is left to the loops.
# An expansion: `$name`, `$@`, `${...}` with nothing nested or quoted inside,
# `$(...)` with parentheses, quoted strings and such expansions inside (one
# level down), or a lone `$` (`\w` is `str.isalnum()` or `_`, as there).
_VARIABLE = r"""\w++|[@*\#?$!-]|\{[^{}"\\]*+\}"""
_INNER_EXPANSION = rf"""\$(?:{_VARIABLE}|\([^()'"\\]*+\)|(?![{{(]))"""
_INNER_DOUBLE = rf"""(?:[^"\\$`]++|{_INNER_EXPANSION})*+"""
_COMMAND = rf"""\((?:[^()'"\\]++|\([^()'"\\]*+\)|'[^']*+'|"{_INNER_DOUBLE}")*+\)"""
_EXPANSION = rf"""\$(?:{_VARIABLE}|{_COMMAND}|(?![{{(]))"""
_SIMPLE_EXPANSION = re.compile(_EXPANSION)
# The inside of a double-quoted string without escapes or backticks whose
# expansions are all as above: its text is its inside as written (dynamic when
# it has a `$`).
_DOUBLE_INSIDE = rf"""(?:[^"\\$`]++|{_EXPANSION})*+"""
_SIMPLE_DOUBLE = re.compile(rf"""{_DOUBLE_INSIDE}\"""")
# The main loop's tokens, after the blanks and line continuations before them:
# (1) a word of plain characters; (2) a newline with the blank or comment lines
# after it (as one at a time, unless a heredoc body starts after the newline);
# (3) a comment; (4) separators; (5) a word of (6) plain characters then one
# double-quoted string (7), single-quoted string (8) or expansion; (9) a word of
# plain characters before a `(` (an array's start, or the word before a `(`
# operator); (10) any other character: an operator or the start of a word the
# word loop reads. Every offset starts a token (or only blanks are left), so
# the matches of `finditer` follow one another.
_WORD_START, _WORD_REST = r"""[^ \t\r\n;&|<>()\\'"$`\#]""", r"""[^ \t\n;&|<>()\\'"$`]*+"""
_WORD_END = r"""(?![^ \t\n;&|<>)])"""  # a separator or the end of the text
_TOKEN = re.compile(
    rf"""[ \t\r]*+(?:\\\n[ \t\r]*+)*+
    (?:({_WORD_START}{_WORD_REST}){_WORD_END}
    |(\n(?:[ \t\r]*+(?:\#[^\n]*+)?\n)*+)|(\#[^\n]*+)|([;&|]++)
    |(({_WORD_START}{_WORD_REST})?+(?:"({_DOUBLE_INSIDE})"|'([^']*+)'|{_EXPANSION})){_WORD_END}
    |({_WORD_START}{_WORD_REST})\(|([\s\S]))""",
    re.VERBOSE,
)
_WORD, _NEWLINE, _COMMENT, _SEPARATORS, _QUOTED, _PREFIX, _INSIDE, _SINGLE = range(1, 9)
_BEFORE_PARENTHESIS, _OTHER = 9, 10


# Not frozen: a script has tens of thousands of words, and a frozen
# dataclass's `__init__` costs three times as much (nothing mutates them).
@dataclass(slots=True)
class Word:
    text: str  # quotes removed; expansions kept as written
    start: int  # offset (characters) of the word's first character
    dynamic: bool = False  # contains an expansion: the value is not known here
    value_start: int = -1  # offset where the text after a `=` starts (else -1)
    value_dynamic: bool = False  # the part after the first `=` contains an expansion
    op: bool = False  # a redirection or other operator, not a word
    end: int = -1  # offset just past the word


@dataclass(slots=True)
class _Lexer:
    s: str
    i: int = 0
    commands: list[list[Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    heredocs: list[tuple[str, bool]] = field(default_factory=list)  # (delimiter, strip tabs)
    array_depth: int = 0

    def end_command(self) -> None:
        if self.words:
            self.commands.append(self.words)
        self.words = []

    def skip_expansion(self, i: int) -> int:
        """End offset of the expansion starting at `s[i] == '$'` or a backtick."""
        s, n = self.s, len(self.s)
        simple = _SIMPLE_EXPANSION.match(s, i)
        if simple is not None:
            return simple.end()
        if s[i] == "`":
            j = i + 1
            while j < n and s[j] != "`":
                j += 2 if s[j] == "\\" else 1
            return min(j + 1, n)
        if i + 1 < n and s[i + 1] in "({":
            close = ")" if s[i + 1] == "(" else "}"
            opener = s[i + 1]
            plain = _IN_PARENS if opener == "(" else _IN_BRACES
            depth, j = 0, i + 1
            while j < n:
                c = s[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "'" and close == ")":
                    end = s.find("'", j + 1)
                    j = n if end < 0 else end + 1
                    continue
                if c == '"':
                    j = self.skip_double(j)[0]
                    continue
                if c == opener:
                    depth += 1
                elif c == close:
                    depth -= 1
                    if depth == 0:
                        return j + 1
                j = plain.match(s, j + 1).end()  # type: ignore[union-attr]
            return n
        j = i + 1
        if j < n and (s[j].isalnum() or s[j] == "_"):
            while j < n and (s[j].isalnum() or s[j] == "_"):
                j += 1
            return j
        return min(j + 1, n) if j < n and s[j] in "@*#?$!-" else j

    def skip_double(self, i: int) -> tuple[int, str, bool]:
        """(end, text, dynamic) of the double-quoted string at `s[i] == '"'`."""
        s, n = self.s, len(self.s)
        simple = _SIMPLE_DOUBLE.match(s, i + 1)
        if simple is not None:
            text = s[i + 1 : simple.end() - 1]
            return simple.end(), text, "$" in text
        j, dynamic = i + 1, False
        out: list[str] = []
        while j < n and s[j] != '"':
            c = s[j]
            if c == "\\" and j + 1 < n:
                if s[j + 1] == "\n":
                    j += 2
                    continue
                if s[j + 1] in '$`"\\':
                    out.append(s[j + 1])
                    j += 2
                    continue
            if c in "$`":
                end = self.skip_expansion(j)
                out.append(s[j:end])
                dynamic = True
                j = end
                continue
            end = _PLAIN_DOUBLE.match(s, j).end()  # type: ignore[union-attr]
            end = max(end, j + 1)
            out.append(s[j:end])
            j = end
        return min(j + 1, n), "".join(out), dynamic

    def read_heredoc_bodies(self) -> None:
        """At the start of a line: skip the pending heredoc bodies."""
        for delimiter, strip in self.heredocs:
            while self.i < len(self.s):
                end = self.s.find("\n", self.i)
                end = len(self.s) if end < 0 else end
                line = self.s[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
        self.heredocs = []

    def word(self) -> None:
        """Read one word starting at `self.i` (one with quotes, expansions or escapes)."""
        s, n = self.s, len(self.s)
        start = self.i
        out: list[str] = []
        dynamic = value_dynamic = False
        value_start = -1
        i = start  # a local index: this loop runs once per word part
        while i < n:
            c = s[i]
            if c in " \t\n;&|<>()":
                if c == "(" and _ASSIGN_ARRAY.search("".join(out)) and not dynamic:
                    self.array_depth += 1
                    i += 1
                    out.append("(")
                break
            if c == "\\":
                if i + 1 < n and s[i + 1] == "\n":
                    i += 2
                    continue
                out.append(s[i + 1 : i + 2])
                i += 2
            elif c == "'":
                end = s.find("'", i + 1)
                end = n if end < 0 else end
                out.append(s[i + 1 : end])
                i = end + 1
            elif c == '"':
                end, text, dyn = self.skip_double(i)
                out.append(text)
                dynamic |= dyn
                value_dynamic |= dyn and value_start >= 0  # the `=` is before it
                i = end
            elif c in "$`":
                end = self.skip_expansion(i)
                out.append(s[i:end])
                dynamic = True
                value_dynamic |= value_start >= 0
                i = end
            else:  # a run of plain characters at once (the same as one at a time)
                end = _PLAIN.match(s, i).end()  # type: ignore[union-attr]
                if value_start < 0 and (equals := s.find("=", i, end)) >= 0:
                    value_start = equals + 1
                out.append(s[i:end])
                i = end
        self.i = i
        text = "".join(out)
        self.words.append(Word(text, start, dynamic, value_start, value_dynamic, end=i))

    def operator(self) -> None:
        """Read the redirection, `(` or `)` at `self.i`."""
        s, n = self.s, len(self.s)
        c = s[self.i]
        if c in "<>":
            j = self.i
            while j < n and s[j] in "<>&|-":
                if s[j] == "&" and j + 1 < n and s[j + 1] in "0123456789-":
                    j += 2
                    break
                j += 1
            op = s[self.i : j]
            self.i = j
            if op.startswith("<<") and not op.startswith("<<<"):
                self._heredoc(op.endswith("-"))
            self.words.append(Word(op, self.i, op=True))
            return
        if c == "(":
            self.end_command()
            self.i += 1
            return
        self.i += 1  # `)`
        if self.array_depth:
            self.array_depth -= 1
            self.words.append(Word(")", self.i - 1, op=True))  # the array's end
            return
        self.end_command()

    def _heredoc(self, strip: bool) -> None:
        s, n = self.s, len(self.s)
        while self.i < n and s[self.i] in " \t":
            self.i += 1
        match = re.match(r"""(['"]?)([A-Za-z0-9_.-]+)\1""", s[self.i :])
        if match:
            self.heredocs.append((match.group(2), strip))
            self.i += match.end()

    def run(self) -> list[list[Word]]:
        s, n = self.s, len(self.s)
        commands, words = self.commands, self.words
        i = 0  # local, as `words`: `self.i` and `self.words` are set around method calls
        while i < n:
            # Token after token, until one needs the methods above.
            for found in _TOKEN.finditer(s, i):
                kind = found.lastindex
                if kind == _WORD:
                    text = found[_WORD]
                    end = found.end()
                    start = end - len(text)
                    equals = text.find("=")
                    value_start = start + equals + 1 if equals >= 0 else -1
                    words.append(Word(text, start, False, value_start, False, False, end))
                elif kind == _NEWLINE:
                    if self.array_depth == 0 and words:
                        commands.append(words)
                        words = []
                    if self.heredocs:  # the bodies start after the first newline
                        self.i = found.start(_NEWLINE) + 1
                        self.read_heredoc_bodies()
                        i = self.i
                        break
                elif kind == _QUOTED:
                    text = found[_QUOTED]
                    end = found.end()
                    start = end - len(text)
                    prefix, inside, single = found.group(_PREFIX, _INSIDE, _SINGLE)
                    dynamic = True  # an expansion, unless a quoted string without one
                    if inside is not None:
                        text = (prefix or "") + inside
                        dynamic = "$" in inside
                    elif single is not None:
                        text = (prefix or "") + single
                        dynamic = False
                    equals = prefix.find("=") if prefix else -1
                    value_start = start + equals + 1 if equals >= 0 else -1
                    value_dynamic = dynamic and equals >= 0
                    words.append(Word(text, start, dynamic, value_start, value_dynamic, False, end))
                elif kind == _SEPARATORS:  # ; & | && || ;;
                    if words:
                        commands.append(words)
                        words = []
                elif kind == _BEFORE_PARENTHESIS:  # an array's start, or a word and `(`
                    text = found.group(_BEFORE_PARENTHESIS)
                    start, end = found.span(_BEFORE_PARENTHESIS)
                    equals = text.find("=")
                    value_start = start + equals + 1 if equals >= 0 else -1
                    if _ASSIGN_ARRAY.search(text):
                        self.array_depth += 1
                        words.append(
                            Word(text + "(", start, False, value_start, False, False, end + 1)
                        )
                    else:
                        words.append(Word(text, start, False, value_start, False, False, end))
                        commands.append(words)  # the `(` ends the command
                        words = []
                elif kind == _OTHER:  # an operator, or a word with quotes, expansions or escapes
                    i = found.start(_OTHER)
                    c = s[i]
                    if c in "<>" and words and words[-1].text.isdigit():
                        words.pop()  # `2>&1`: the descriptor belongs to the operator
                    self.i, self.words = i, words
                    if c in "<>()":
                        self.operator()
                    else:
                        self.word()
                    i, words = self.i, self.words
                    break
            else:
                break  # only blanks were left
        self.words = words
        self.end_command()
        return self.commands


def commands(text: str) -> list[list[Word]]:
    """The simple commands of a shell script, as words (array bodies inline)."""
    return _Lexer(text).run()
