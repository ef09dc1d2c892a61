"""Thumbnails in report.html's case view (issue 32): the images a case showed the judge, as
the data URL results.jsonl keeps or their http(s) URL; the page stays one file, and no URL
or caption can add markup or script to it."""

from __future__ import annotations

import base64
from pathlib import Path

from judgecli.inputs.images import image_mark
from judgecli.report.html import render_html
from judgecli.report.images import thumbnails_html
from judgecli.result import ShownImage
from tests.unit.report.test_html import XSS, score_summary, scored

REPO = Path(__file__).resolve().parents[3]
SQUARE = (REPO / "datasets" / "images" / "red-square.png").read_bytes()
SQUARE_URL = f"data:image/png;base64,{base64.b64encode(SQUARE).decode()}"


def test_a_case_with_an_image_shows_its_thumbnail_under_its_text():
    case = {"input": f"What is this?\n{image_mark('images/square.png', '', SQUARE_URL)}"}
    page = render_html(score_summary(), [scored(1, 4.0, "x", case=case)])
    assert f'<img src="{SQUARE_URL}" alt="input [image 1]: images/square.png, image/png, ' in page
    assert "What is this?\n[image 1]" in page
    assert ".case-images img{" in page


def test_an_http_image_is_shown_by_its_url_escaped():
    url = 'https://example.com/a.png?x=1&y="2"'
    html = thumbnails_html([ShownImage(field="output", image=1, url=url)])
    assert 'src="https://example.com/a.png?x=1&amp;y=&quot;2&quot;"' in html
    assert "output [image 1]: https://example.com/a.png?x=1&amp;y" in html


def test_only_http_and_image_data_urls_reach_an_src():
    for url in ("javascript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd"):
        html = thumbnails_html([ShownImage(field="output", image=1, url=url)])
        assert "<img" not in html
        assert "not shown" in html


def test_a_caption_from_a_file_name_is_escaped():
    html = thumbnails_html(
        [ShownImage(field="input", image=2, file=XSS, media_type="image/png", bytes=2048)]
    )
    assert XSS not in html
    assert "input [image 2]: &lt;script&gt;alert(1)&lt;/script&gt;, image/png, 2.0 KB" in html
    assert "not shown: larger than results.jsonl keeps" in html


def test_a_case_without_images_has_no_thumbnails():
    assert thumbnails_html(None) == thumbnails_html([]) == ""
    page = render_html(score_summary(), [scored(1, 4.0, "x")])
    assert "<img" not in page
