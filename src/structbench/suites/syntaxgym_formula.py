"""SyntaxGym's prediction formulas, parsed into a tree and evaluated on a table of region surprisals.

A SyntaxGym suite states what a language model should find surprising as formulas such as
`((5;%reduced_ambig%) > (5;%unreduced_ambig%)) & ((5;%reduced_ambig%) > (5;%reduced_unambig%))`.
The suite files are data from outside the package, so they are parsed here by a small
recursive-descent parser, never by `eval`; a malformed formula is one sentence naming the suite,
the prediction and the place (`FormulaError`).

The language is the one of syntaxgym-core's `prediction.py` (github.com/cpllab/syntaxgym-core at
ab6b1f8, lines 13-15 and 21-140), which the authors' pipeline ran:

- an atom is a region reference `(N;%condition%)` (N a region number, or `*` for the sum of every
  region of the condition; the condition's name of letters, digits, `_` and `-`; `;%` written
  together, as the reference grammar's `Suppress(";%")` asks), a number (`pyparsing_common.number`:
  an optional sign, digits, a fraction, an exponent), or a parenthesised formula;
- `+` and `-` bind tightest, left to right; then the comparisons `<`, `>` and `=`; then `&` and
  `|`, which share one level and group left to right (`a & b | c` is `(a & b) | c`);
- `=` holds where the two sides are close as `numpy.isclose` defines it, with rtol 1e-5 and atol
  1e-3 (`EQUALITY_RTOL`, `EQUALITY_ATOL`): |a - b| <= atol + rtol * |b|.

Stricter than the reference, which accepts these silently and gives them a meaning no suite uses:
a chain of comparisons (`a < b < c`; the reference keeps `a < b` and drops the rest), `&` or `|`
over numbers, `+` or `-` over comparisons, and a formula that is not a comparison at the top
(whose truth the reference takes from a number) are malformed here. Every formula of the 34
suites parses (tests/suites/test_syntaxgym.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from structbench.errors import UserError

EQUALITY_RTOL = 1e-5
"""Relative tolerance of `=` (syntaxgym-core prediction.py line 14)."""
EQUALITY_ATOL = 1e-3
"""Absolute tolerance of `=`, in bits (syntaxgym-core prediction.py line 15)."""

LANGUAGE = "region references `(REGION;%CONDITION%)`, numbers, `+ -`, then `< > =`, then `& |`, and parentheses"
"""The formula language in one phrase, for the error sentences."""

Surprisals = Mapping[tuple[str, int], float]
"""(condition name, region number) -> the region's surprisal in bits, region numbers from 1."""


class FormulaError(UserError):
    """A prediction formula that does not parse, or refers to what its item does not have."""


@dataclass(frozen=True)
class Region:
    """`(N;%condition%)`: one region's surprisal, or with `number` None (`*`) the condition's total."""

    number: int | None
    condition: str

    def value(self, table: Surprisals) -> float:
        if self.number is None:
            return sum(value for (condition, _), value in table.items() if condition == self.condition)
        return table[self.condition, self.number]

    def __str__(self) -> str:
        return f"({'*' if self.number is None else self.number};%{self.condition}%)"


@dataclass(frozen=True)
class Number:
    """A number literal."""

    literal: float

    def value(self, table: Surprisals) -> float:
        return self.literal

    def __str__(self) -> str:
        return repr(self.literal)


@dataclass(frozen=True)
class Arithmetic:
    """`left + right` or `left - right`."""

    operator: Literal["+", "-"]
    left: Quantity
    right: Quantity

    def value(self, table: Surprisals) -> float:
        left, right = self.left.value(table), self.right.value(table)
        return left + right if self.operator == "+" else left - right

    def __str__(self) -> str:
        return f"({self.left} {self.operator} {self.right})"


Quantity = Region | Number | Arithmetic
"""A formula whose value is a number of bits."""


@dataclass(frozen=True)
class Comparison:
    """`left < right`, `left > right`, or `left = right` (close within `EQUALITY_RTOL`, `EQUALITY_ATOL`)."""

    operator: Literal["<", ">", "="]
    left: Quantity
    right: Quantity

    def holds(self, table: Surprisals) -> bool:
        left, right = self.left.value(table), self.right.value(table)
        if self.operator == "<":
            return left < right
        if self.operator == ">":
            return left > right
        return abs(left - right) <= EQUALITY_ATOL + EQUALITY_RTOL * abs(right)  # numpy.isclose(left, right)

    def __str__(self) -> str:
        return f"({self.left} {self.operator} {self.right})"


@dataclass(frozen=True)
class Logical:
    """`left & right` or `left | right`."""

    operator: Literal["&", "|"]
    left: Claim
    right: Claim

    def holds(self, table: Surprisals) -> bool:
        if self.operator == "&":
            return self.left.holds(table) and self.right.holds(table)
        return self.left.holds(table) or self.right.holds(table)

    def __str__(self) -> str:
        return f"({self.left} {self.operator} {self.right})"


Claim = Comparison | Logical
"""A formula whose value is true or false: what a prediction is."""


def regions(node: Quantity | Claim) -> Iterator[Region]:
    """Every region reference of `node`, left to right."""
    if isinstance(node, Region):
        yield node
    elif isinstance(node, Arithmetic | Comparison | Logical):
        yield from regions(node.left)
        yield from regions(node.right)


_REGION = re.compile(r"\(\s*(\d+|\*)\s*;%\s*([A-Za-z0-9_-]+)\s*%\s*\)")
_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s*")


@dataclass(frozen=True)
class _Token:
    kind: str
    """`region`, `number`, or the operator or parenthesis itself."""
    text: str
    at: int
    region: Region | None = None


class _Malformed(Exception):
    """A parse failure at a place; `parse_formula` turns it into a `FormulaError` sentence."""

    def __init__(self, problem: str, at: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.at = at


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    at = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    while at < len(text):
        char = text[at]
        if char == "(" and (match := _REGION.match(text, at)):
            number = None if match[1] == "*" else int(match[1])
            out.append(_Token("region", match[0], at, Region(number, match[2])))
            at = match.end()
        elif char.isdigit() or char == "." or (char in "+-" and _signed_number(text, at, out)):
            match = _NUMBER.match(text, at)
            if match is None:
                raise _Malformed(f"`{char}` starts no number", at)
            out.append(_Token("number", match[0], at))
            at = match.end()
        elif char in "+-<>=&|()":
            out.append(_Token(char, char, at))
            at += 1
        elif char in ";%":
            raise _Malformed(f"`{char}` outside a region reference `(REGION;%CONDITION%)`", at)
        else:
            raise _Malformed(f"`{char}` is not part of the formula language", at)
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
    return out


def _signed_number(text: str, at: int, before: list[_Token]) -> bool:
    """Whether the sign at `at` starts a signed number: a digit or point follows at once, and an operand
    is expected there (at the start, or after an operator or `(`)."""
    follows = text[at + 1 : at + 2]
    expected = not before or before[-1].kind not in ("region", "number", ")")
    return expected and (follows.isdigit() or follows == ".")


class _Parser:
    """Recursive descent over the tokens, one method per precedence level (lowest first)."""

    def __init__(self, tokens: list[_Token], length: int) -> None:
        self.tokens = tokens
        self.position = 0
        self.length = length

    def peek(self) -> _Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise _Malformed("the formula ends where an operand was expected", self.length)
        self.position += 1
        return token

    def formula(self) -> Claim:
        at = self.peek().at if self.peek() else self.length  # type: ignore[union-attr]
        node = self.claim()
        if not isinstance(node, Comparison | Logical):
            raise _Malformed("a prediction must be a comparison (`<`, `>`, `=`), not a number", at)
        token = self.peek()
        if token is not None:
            raise _Malformed(f"`{token.text}` follows a complete formula", token.at)
        return node

    def claim(self) -> Quantity | Claim:
        left = self.comparison()
        while (token := self.peek()) is not None and token.kind in ("&", "|"):
            self.take()
            right = self.comparison()
            for side in (left, right):
                if not isinstance(side, Comparison | Logical):
                    raise _Malformed(f"`{token.kind}` joins comparisons, not numbers", token.at)
            left = Logical(token.kind, left, right)  # type: ignore[arg-type]
        return left

    def comparison(self) -> Quantity | Claim:
        left = self.sum()
        token = self.peek()
        if token is None or token.kind not in ("<", ">", "="):
            return left
        self.take()
        right = self.sum()
        for side in (left, right):
            if isinstance(side, Comparison | Logical):
                raise _Malformed(f"`{token.kind}` compares numbers, not comparisons", token.at)
        after = self.peek()
        if after is not None and after.kind in ("<", ">", "="):
            raise _Malformed(
                f"`{after.kind}` chains a second comparison (write `(a {token.kind} b) & (b {after.kind} c)`)", after.at
            )
        return Comparison(token.kind, left, right)  # type: ignore[arg-type]

    def sum(self) -> Quantity | Claim:
        left = self.atom()
        while (token := self.peek()) is not None and token.kind in ("+", "-"):
            self.take()
            right = self.atom()
            for side in (left, right):
                if isinstance(side, Comparison | Logical):
                    raise _Malformed(f"`{token.kind}` adds numbers, not comparisons", token.at)
            left = Arithmetic(token.kind, left, right)  # type: ignore[arg-type]
        return left

    def atom(self) -> Quantity | Claim:
        token = self.take()
        if token.kind == "region":
            assert token.region is not None
            return token.region
        if token.kind == "number":
            return Number(float(token.text))
        if token.kind == "(":
            inner = self.claim()
            closing = self.peek()
            if closing is None or closing.kind != ")":
                at = self.length if closing is None else closing.at
                raise _Malformed(f"the `(` at character {token.at + 1} is not closed", at)
            self.take()
            return inner
        raise _Malformed(
            f"`{token.text}` stands where a region `(REGION;%CONDITION%)`, a number or `(` was expected", token.at
        )


def parse_formula(text: str, *, suite: str, prediction: int) -> Claim:
    """The tree of `text`, prediction number `prediction` (from 1) of `suite`; a `FormulaError` naming
    both, the place and the language where it is malformed."""
    try:
        return _Parser(_tokens(text), len(text)).formula()
    except _Malformed as error:
        shown = " ".join(text.split())
        raise FormulaError(
            f"the SyntaxGym suite {suite}, prediction {prediction} `{shown[:200]}`, is malformed at character "
            f"{error.at + 1}: {error.problem}; a prediction is written with {LANGUAGE}."
        ) from None


def check_references(formula: Claim, conditions: Mapping[str, int], *, where: str) -> None:
    """A `FormulaError` where `formula` refers to a condition the item lacks (`conditions`: name -> its
    number of regions) or to a region beyond the condition's."""
    for region in regions(formula):
        count = conditions.get(region.condition)
        if count is None:
            raise FormulaError(
                f"{where} refers to condition `{region.condition}`, which the item does not have "
                f"(it has {', '.join(conditions) or 'none'}); name one of its conditions."
            )
        if region.number is not None and not 1 <= region.number <= count:
            raise FormulaError(
                f"{where} refers to region {region.number} of condition `{region.condition}`, which has regions "
                f"1 to {count}; name one of those."
            )
