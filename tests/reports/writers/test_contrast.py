"""Every badge of the site, and every cell of the overview's colour scale, is legible: its text and its
background differ by at least WCAG 2's 4.5:1 contrast ratio (relative luminance, computed from the
stylesheet's own colours), so that an UNDER-TRAINED badge on a dark cell is never red on navy again."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from structbench.reports.views.format import SCALE, scale_colour

MINIMUM = 4.5
"""WCAG 2.x, success criterion 1.4.3: text smaller than 18 pt (every badge is) needs 4.5:1."""


def luminance(colour: str) -> float:
    """WCAG's relative luminance of a `#rgb` or `#rrggbb` colour."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(2 * d for d in digits)
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def rules() -> list[tuple[str, dict[str, str]]]:
    """The stylesheet's rules as (selector list, declarations), `var(--name)` resolved, at any media width."""
    css = resources.files("structbench.reports").joinpath("static/site.css").read_text(encoding="utf-8")
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = dict(
            (name.strip(), value.strip()) for name, value in re.findall(r"([\w-]+)\s*:\s*([^;]+)", body)
        )
        found.append((" ".join(selector.split()), declarations))
    variables = {name: value for selector, body in found if selector == ":root" for name, value in body.items()}
    return [
        (selector, {n: re.sub(r"var\((--[\w-]+)\)", lambda m: variables[m.group(1)], v) for n, v in body.items()})
        for selector, body in found
    ]


def badge_colours() -> dict[str, tuple[str, str]]:
    """Every badge rule (a selector naming `.tag`, or a verdict's `.status-*`) -> (text, background), a
    colour it does not set taken from the base `.tag` rule (badges) or the page (verdicts, on white)."""
    every = rules()
    base = next(body for selector, body in every if selector == ".tag")
    paper = next(body for selector, body in every if selector == ":root")["--paper"]
    out = {}
    for selector, body in every:
        for one in selector.split(","):
            if ".tag" in one and ("color" in body or "background" in body):
                out[one.strip()] = (body.get("color", base["color"]), body.get("background", base["background"]))
            elif ".status-" in one and "color" in body:
                out[one.strip()] = (body["color"], body.get("background", paper))
    return out


def test_the_stylesheet_gives_every_badge_its_own_text_and_background() -> None:
    found = badge_colours()
    assert {".tag", ".tag.rank", ".tag.apart", ".tag.undertrained", ".tag.reference"} <= found.keys()
    assert ".status-contradicted" in found
    assert all(re.fullmatch(r"#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?", c) for pair in found.values() for c in pair), found


@pytest.mark.parametrize("selector", sorted(badge_colours()))
def test_every_badge_has_a_contrast_of_at_least_four_and_a_half_to_one(selector: str) -> None:
    text, background = badge_colours()[selector]
    assert contrast(text, background) >= MINIMUM, f"{selector}: {text} on {background}"


@pytest.mark.parametrize("index", range(len(SCALE)))
def test_every_step_of_the_overviews_colour_scale_has_legible_text(index: int) -> None:
    background, text = scale_colour((index + 0.5) / len(SCALE), higher_is_better=True)
    assert background == SCALE[index]
    assert contrast(text, background) >= MINIMUM, f"step {index}: {text} on {background}"


def test_the_contrast_is_wcags() -> None:
    # WCAG's own end points: black on white is 21:1, a colour on itself 1:1; #767676 on white is the
    # lightest grey that passes (4.54:1)
    assert contrast("#000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#1d91c0", "#1d91c0") == pytest.approx(1.0)
    assert contrast("#767676", "#fff") == pytest.approx(4.54, abs=0.01)
