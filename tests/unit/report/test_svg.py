"""The SVG builders: well-formed, drawn to scale, labelled with the given numbers, escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax import saxutils

import pytest

from judgecli.report import forest, svg
from judgecli.report.bars import bar_chart, histogram
from judgecli.report.charts import Segment, heat_map, reliability_diagram, scatter, stacked_bar
from judgecli.report.svg import Bar
from judgecli.stats.calibration import ReliabilityBin

BINS = [
    ReliabilityBin(low=0.5, high=0.6, mean_confidence=0.55, accuracy=0.25, count=4),
    ReliabilityBin(low=0.8, high=0.9, mean_confidence=0.86, accuracy=1.0, count=7),
]


def parse(text):
    return ET.fromstring(text)


def by_class(root, tag, cls):
    return [e for e in root.iter(tag) if cls in (e.get("class") or "").split()]


def f(element, name):
    return float(element.get(name))


def texts(root):
    """What each <text> shows (its tooltip <title> left out)."""
    return [(e.text or "") + "".join(c.tail or "" for c in e) for e in root.iter("text")]


BUILDERS = [
    pytest.param(lambda: bar_chart([Bar("a", 0.4, 0.2, 0.6)], title="t"), id="hbar"),
    pytest.param(lambda: bar_chart([Bar("a", 3.0, 2.0, 4.0)], title="t", vertical=True), id="vbar"),
    pytest.param(lambda: histogram({"1": 2, "2": 0, "3": 5}, title="t"), id="histogram"),
    pytest.param(
        lambda: forest.forest_plot([Bar("a", 0.7, 0.5, 0.9)], title="t", reference=0.55),
        id="forest",
    ),
    pytest.param(lambda: stacked_bar([Segment("w", 3, "new")], title="t"), id="stacked"),
    pytest.param(
        lambda: heat_map(
            ["1", "2"], ["1", "2"], [[3, 1], [0, 2]], title="t", row_title="h", column_title="j"
        ),
        id="heatmap",
    ),
    pytest.param(lambda: reliability_diagram(BINS, title="t"), id="reliability"),
    pytest.param(
        lambda: scatter(
            [(5.0, "new"), (-3.0, "old")],
            lanes=[("new", "N"), ("old", "O")],
            title="t",
            x_label="x",
        ),
        id="scatter",
    ),
    pytest.param(lambda: bar_chart([], title="t"), id="empty-bars"),
    pytest.param(lambda: stacked_bar([Segment("w", 0, "new")], title="t"), id="empty-stack"),
    pytest.param(lambda: reliability_diagram([], title="t"), id="empty-reliability"),
]


@pytest.mark.parametrize("build", BUILDERS)
def test_every_builder_returns_one_well_formed_svg_element_with_a_title(build):
    root = parse(build())
    assert root.tag == "svg"
    assert root.find("title").text == "t"
    assert "chart" in root.get("class")


@pytest.mark.parametrize("build", BUILDERS)
def test_output_is_deterministic_and_self_contained(build):
    text = build()
    assert text == build()
    assert "http" not in text
    assert "href" not in text


def test_horizontal_bar_lengths_are_proportional_to_the_values():
    root = parse(
        bar_chart([Bar("a", 0.2), Bar("b", 0.5), Bar("c", 1.0)], title="t", domain=(0.0, 1.0))
    )
    rects = by_class(root, "rect", "bar")
    widths = [f(r, "width") for r in rects]
    assert widths[0] / widths[2] == pytest.approx(0.2, abs=1e-3)
    assert widths[1] / widths[2] == pytest.approx(0.5, abs=1e-3)
    assert len({f(r, "x") for r in rects}) == 1  # all start at the domain's low end


def test_interval_whiskers_end_at_the_interval_bounds():
    root = parse(
        bar_chart([Bar("full", 1.0), Bar("b", 0.5, 0.3, 0.6)], title="t", domain=(0.0, 1.0))
    )
    full = by_class(root, "rect", "bar")[0]
    x0, unit = f(full, "x"), f(full, "width")
    whisker = by_class(root, "line", "ci")[0]
    assert f(whisker, "x1") == pytest.approx(x0 + 0.3 * unit, abs=0.02)
    assert f(whisker, "x2") == pytest.approx(x0 + 0.6 * unit, abs=0.02)
    assert f(whisker, "y1") == f(whisker, "y2")


def test_bars_are_labelled_with_their_text_or_value():
    root = parse(
        bar_chart(
            [Bar("win rate", 0.767, 0.65, 0.883, text="76.7% [65.0%, 88.3%]"), Bar("plain", 3.0)],
            title="t",
        )
    )
    assert "76.7% [65.0%, 88.3%]" in texts(root)
    assert "3" in texts(root)
    assert "win rate" in texts(root)


def test_vertical_bar_heights_are_proportional_and_whiskers_vertical():
    root = parse(
        bar_chart(
            [Bar("a", 2.0, 1.0, 3.0), Bar("b", 4.0)], title="t", domain=(0.0, 4.0), vertical=True
        )
    )
    a, b = by_class(root, "rect", "bar")
    assert f(a, "height") / f(b, "height") == pytest.approx(0.5, abs=1e-3)
    assert f(a, "y") + f(a, "height") == pytest.approx(f(b, "y") + f(b, "height"))
    stem = by_class(root, "line", "ci")[0]
    bottom, per_unit = f(b, "y") + f(b, "height"), f(b, "height") / 4
    assert stem.get("x1") == stem.get("x2")
    assert f(stem, "y1") == pytest.approx(bottom - 1.0 * per_unit, abs=0.02)
    assert f(stem, "y2") == pytest.approx(bottom - 3.0 * per_unit, abs=0.02)


def test_histogram_draws_each_count_in_order():
    root = parse(histogram({"1": 2, "2": 0, "3": 6}, title="t"))
    rects = by_class(root, "rect", "bar")
    assert [f(r, "height") / f(rects[2], "height") for r in rects] == pytest.approx([1 / 3, 0, 1])
    xs = [f(r, "x") for r in rects]
    assert xs == sorted(xs)
    assert {"1", "2", "3", "6"} <= set(texts(root))


def test_forest_plot_puts_points_whiskers_and_reference_on_one_scale():
    rows = [
        Bar("above", 0.8, 0.6, 0.9),
        Bar("below", 0.3, 0.1, 0.45),
        Bar("straddles", 0.5, 0.4, 0.7),
    ]
    root = parse(forest.forest_plot(rows, title="t", reference=0.55, reference_label="gate 55%"))
    points = by_class(root, "circle", "point")
    whiskers = [w for w in by_class(root, "line", "ci") if w.get("y1") == w.get("y2")]
    # Pixel per unit from the first row's whisker: x(0.9) - x(0.6) = 0.3 units.
    unit = (f(whiskers[0], "x2") - f(whiskers[0], "x1")) / 0.3
    x0 = f(whiskers[0], "x1") - 0.6 * unit
    for row, point, whisker in zip(rows, points, whiskers, strict=True):
        assert f(point, "cx") == pytest.approx(x0 + row.value * unit, abs=0.05)
        assert f(whisker, "x1") == pytest.approx(x0 + row.low * unit, abs=0.05)
        assert f(whisker, "x2") == pytest.approx(x0 + row.high * unit, abs=0.05)
    reference = by_class(root, "line", "ref")[0]
    assert f(reference, "x1") == pytest.approx(x0 + 0.55 * unit, abs=0.05)
    assert [p.get("class") for p in points] == ["point above", "point below", "point straddles"]
    assert "gate 55%" in texts(root)


# Regression (review 2026-11-23, finding 9): a category of 4 cases all scored 3, interval
# [3, 3], was drawn red ("whole interval below the mean" of 3.04).
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(Bar("travel", 3.0, 3.0, 3.0), id="zero-width-interval"),
        pytest.param(Bar("travel", 3.0), id="no-interval"),
        pytest.param(Bar("health", 1.0, 0.57, 1.0, too_few=True), id="too-few-cases"),
    ],
)
def test_a_row_without_evidence_is_grey_never_above_or_below(row):
    root = parse(forest.forest_plot([row], title="t", reference=0.5, domain=(0.0, 4.0)))
    assert [p.get("class") for p in by_class(root, "circle", "point")] == ["point few"]


def test_a_forest_plot_with_a_reference_has_a_legend_for_every_colour():
    root = parse(forest.forest_plot([Bar("a", 0.7, 0.5, 0.9)], title="t", reference=0.5))
    keys = by_class(root, "circle", "key")
    assert [k.get("class") for k in keys] == ["key above", "key below", "key straddles", "key few"]
    shown = texts(root)
    for _, text in forest.LEGEND:
        assert text in shown
    # The legend sits below the axis, inside the drawing.
    height = f(root, "height")
    axis_labels = [f(t, "y") for t in root.iter("text") if t.get("class") == "muted"]
    assert all(max(axis_labels) < f(k, "cy") < height for k in keys)


def test_a_forest_plot_without_a_reference_has_no_legend():
    root = parse(forest.forest_plot([Bar("a", 0.7, 0.5, 0.9)], title="t", reference=None))
    assert by_class(root, "circle", "key") == []


def test_stacked_bar_parts_are_proportional_with_counts_and_shares():
    segments = [
        Segment("NEW wins", 19, "new"),
        Segment("ties", 8, "tie"),
        Segment("OLD wins", 3, "old"),
    ]
    root = parse(stacked_bar(segments, title="t"))
    parts = by_class(root, "rect", "segment")
    widths = [f(p, "width") for p in parts]
    assert [w / sum(widths) for w in widths] == pytest.approx([19 / 30, 8 / 30, 3 / 30], abs=1e-3)
    assert f(parts[1], "x") == pytest.approx(f(parts[0], "x") + widths[0], abs=0.02)
    assert "NEW wins 19 (63.3%)" in texts(root)
    assert "OLD wins 3 (10.0%)" in texts(root)


def test_heat_map_writes_every_count_and_shades_by_it():
    matrix = [[7, 3], [0, 10]]
    root = parse(
        heat_map(["a", "b"], ["a", "b"], matrix, title="t", row_title="human", column_title="judge")
    )
    cells = by_class(root, "rect", "cell")
    opacity = [f(c, "fill-opacity") for c in cells]
    assert opacity[2] == 0  # an empty cell is blank
    assert opacity[3] == pytest.approx(1.0)
    assert opacity[1] < opacity[0] < opacity[3]
    assert [c.get("class") for c in cells] == ["cell diagonal", "cell", "cell", "cell diagonal"]
    assert {"7", "3", "0", "10", "human", "judge"} <= set(texts(root))


def test_reliability_bars_span_their_bins_up_to_their_accuracy_with_counts():
    root = parse(reliability_diagram(BINS, title="t"))
    low, high = by_class(root, "rect", "bar")
    unit = f(low, "width") / 0.1  # the plot is square: one scale on both axes
    assert f(high, "x") - f(low, "x") == pytest.approx(0.3 * unit, abs=0.05)
    assert f(low, "height") == pytest.approx(0.25 * unit, abs=0.05)
    assert f(high, "height") == pytest.approx(1.0 * unit, abs=0.05)
    diagonal = by_class(root, "line", "ref")[0]
    assert f(diagonal, "x2") - f(diagonal, "x1") == pytest.approx(1.0 * unit, abs=0.05)
    assert f(diagonal, "y1") - f(diagonal, "y2") == pytest.approx(1.0 * unit, abs=0.05)
    assert {"4", "7"} <= set(texts(root))
    point = by_class(root, "circle", "point")[0]
    assert f(point, "cx") == pytest.approx(f(low, "x") + 0.05 * unit, abs=0.05)


def test_scatter_places_points_by_value_and_lane():
    points = [(100.0, "new"), (-50.0, "old"), (0.0, "tie"), (20.0, "new")]
    root = parse(
        scatter(
            points,
            lanes=[("new", "NEW won"), ("tie", "tie"), ("old", "OLD won")],
            title="t",
            x_label="chars",
        )
    )
    dots = by_class(root, "circle", "dot")
    zero = f(by_class(root, "line", "ref")[0], "x1")
    xs = [f(d, "cx") for d in dots]
    assert xs[2] == pytest.approx(zero)
    assert xs[0] - zero == pytest.approx(2 * (zero - xs[1]), abs=0.05)
    assert [d.get("class") for d in dots] == ["dot new", "dot old", "dot tie", "dot new"]
    lanes = [f(d, "cy") for d in dots]
    assert lanes[0] < lanes[2] < lanes[1]  # new above tie above old
    assert {"NEW won (n=2)", "tie (n=1)", "OLD won (n=1)"} <= set(texts(root))


def test_user_text_is_escaped_and_survives_parsing():
    nasty = '<script>alert("x")</script> & co'
    drawn = [
        bar_chart([Bar(nasty, 0.5, text=nasty)], title=nasty),
        forest.forest_plot([Bar(nasty, 0.5)], title=nasty, reference=0.5, reference_label=nasty),
        heat_map([nasty], [nasty], [[1]], title=nasty, row_title=nasty, column_title=nasty),
        stacked_bar([Segment(nasty, 1, "new")], title=nasty),
    ]
    for chart in drawn:
        assert "<script>" not in chart
        root = parse(chart)
        assert root.find("title").text == nasty
        assert not list(root.iter("script"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(12.0, "12", id="whole"),
        pytest.param(0.125, "0.12", id="two-decimals"),
        pytest.param(1.5, "1.5", id="trailing-zero"),
        pytest.param(-0.001, "0", id="negative-zero"),
        pytest.param(100.0, "100", id="keeps-zeros-before-the-point"),
    ],
)
def test_coordinates_are_rounded_to_two_decimals(value, expected):
    assert svg.num(value) == expected


@pytest.mark.parametrize(
    ("lo", "hi", "count", "expected"),
    [
        pytest.param(0.0, 1.0, 5, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], id="unit"),
        pytest.param(0.0, 9.0, 5, [0.0, 2.0, 4.0, 6.0, 8.0], id="counts"),
        pytest.param(1.0, 4.0, 5, [1.0, 2.0, 3.0, 4.0], id="scale"),
        pytest.param(
            -300.0, 300.0, 6, [-300.0, -200.0, -100.0, 0.0, 100.0, 200.0, 300.0], id="symmetric"
        ),
        pytest.param(0.0, 0.75, 5, [0.0, 0.2, 0.4, 0.6], id="stops-inside"),
        pytest.param(2.0, 2.0, 5, [2.0], id="empty-domain"),
    ],
)
def test_ticks_are_round_numbers_inside_the_domain(lo, hi, count, expected):
    assert svg.ticks(lo, hi, count) == pytest.approx(expected)


def test_values_outside_the_domain_are_clamped_to_it():
    scale = svg.Scale(0.0, 1.0, 10.0, 110.0)
    assert scale(-1.0) == 10.0
    assert scale(2.0) == 110.0
    assert scale(0.25) == 35.0


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("<b>x</b> & y > z", id="markup-and-ampersand"),
        pytest.param('say "hi"', id="double-quotes"),
        pytest.param("it's", id="single-quote"),
        pytest.param("""both " and '""", id="both-quotes"),
        pytest.param("tab\tnewline\ncr\r", id="whitespace"),
        pytest.param("&amp; &#10; written as text", id="entities-as-text"),
        pytest.param("🎉 \x1b[0m", id="non-bmp-and-control"),
        pytest.param("", id="empty"),
    ],
)
def test_text_and_attributes_are_escaped_as_saxutils_escapes_them(value):
    # svg writes saxutils's two functions out rather than import it (it imports urllib).
    assert svg.escape(value) == saxutils.escape(value)
    assert svg.quoteattr(value) == saxutils.quoteattr(value)
    assert svg.el("text", value, title=value) == (
        f"<text title={saxutils.quoteattr(value)}>{saxutils.escape(value)}</text>"
        if value
        else f"<text title={saxutils.quoteattr(value)}/>"
    )
