"""docs/api.md's reference is what its docstrings render (issue 31): edit a docstring, then
run `python -m tests.api_docs`."""

from __future__ import annotations

from tests.api_docs import BEGIN, END, PAGE, docstring_markdown, rendered_page


def test_the_committed_reference_is_the_rendered_one():
    page = PAGE.read_text(encoding="utf-8")
    assert page == rendered_page(page), "run: python -m tests.api_docs"


def test_the_reference_documents_every_public_name():
    import judgecli

    reference = PAGE.read_text(encoding="utf-8").partition(BEGIN)[2].partition(END)[0]
    named = [f"`{n}`" for n in judgecli.__all__], [f"`judgecli.{n}`" for n in judgecli.__all__]
    missing = [
        n
        for n, a, b in zip(judgecli.__all__, *named, strict=True)
        if a not in reference and b not in reference
    ]
    assert missing == []


def test_a_google_docstring_becomes_markdown():
    doc = """Do it.

    More words.

    Args:
        first: The first,
            on two lines.
        **rest: The others.

    Returns:
        What came of it.
    """
    assert docstring_markdown(doc) == (
        "Do it.\n\nMore words.\n\n**Args**\n\n- `first`: The first, on two lines.\n"
        "- `**rest`: The others.\n\n**Returns**\n\nWhat came of it."
    )
