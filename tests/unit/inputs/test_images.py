"""Images in cases (issue 32): content parts with `image_url` in `input`, `output`,
`reference` or a turn of `messages`, read into the field's text as marks; a file read from
the dataset's folder as a data URL of the type its bytes say; what cannot be read is exit 2
naming file:line and the fix."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from judgecli.errors import DatasetError
from judgecli.inputs.dataset import parse_case, scan_dataset
from judgecli.inputs.images import (
    ImageError,
    MediaType,
    anchored_images,
    image_count,
    image_mark,
    media_type,
    read_image,
    text_length,
)
from judgecli.inputs.pairs import scan_pairs
from judgecli.result import IMAGE_MARK

REPO = Path(__file__).resolve().parents[3]
RED_SQUARE = (REPO / "datasets" / "images" / "red-square.png").read_bytes()
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 20
GIF = b"GIF89a" + b"\x00" * 20
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20


def data_url(data: bytes, kind: str = "image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def image_part(url: str, **extra) -> dict:
    return {"type": "image_url", "image_url": {"url": url, **extra}}


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


def case_at(folder: Path, obj: dict, number: int = 3):
    return parse_case(folder / "cases.jsonl", number, json.dumps(obj), field_map={}, requires=[])


def urls(text: str) -> list[str]:
    return [m.group(3) for m in IMAGE_MARK.finditer(text)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "square.png").write_bytes(RED_SQUARE)
    return tmp_path


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        pytest.param(RED_SQUARE, MediaType.PNG, id="png"),
        pytest.param(JPEG, MediaType.JPEG, id="jpeg"),
        pytest.param(GIF, MediaType.GIF, id="gif"),
        pytest.param(WEBP, MediaType.WEBP, id="webp"),
        pytest.param(b"BM\x00\x00", None, id="bmp-is-not-taken"),
        pytest.param(b"<svg xmlns=", None, id="svg-is-not-taken"),
    ],
)
def test_an_image_type_is_told_by_its_first_bytes(data, kind):
    assert media_type(data) == kind


def test_a_path_is_read_from_the_datasets_folder_as_a_data_url_of_its_type(folder):
    case = case_at(folder, {"input": [text_part("What is this?"), image_part("images/square.png")]})
    assert case.input is not None
    assert urls(case.input) == [data_url(RED_SQUARE)]
    assert case.input.startswith("What is this?\n")
    assert case.images_shown == 1


def test_a_file_url_and_an_absolute_path_are_read_too(folder):
    absolute = str(folder / "images" / "square.png")
    for url in (absolute, f"file://{absolute}"):
        case = case_at(folder, {"input": "q", "output": [image_part(url)]})
        assert case.output is not None
        assert urls(case.output) == [data_url(RED_SQUARE)]


def test_the_mime_type_is_the_bytes_not_the_name_or_the_data_urls_claim(folder):
    # A JPEG saved as .png, and a data URL that calls a PNG a JPEG: both sent as what they are.
    (folder / "images" / "photo.png").write_bytes(JPEG)
    case = case_at(
        folder,
        {
            "input": [image_part("images/photo.png")],
            "output": [image_part(data_url(RED_SQUARE, "image/jpeg"))],
        },
    )
    assert urls(case.input or "")[0].startswith("data:image/jpeg;base64,")
    assert urls(case.output or "") == [data_url(RED_SQUARE)]


def test_an_http_url_is_kept_as_it_is_and_never_fetched(folder):
    url = "https://example.com/cat.png?size=small&v=2"
    case = case_at(folder, {"input": [image_part(url, detail="low")], "output": "a cat"})
    [mark] = IMAGE_MARK.finditer(case.input or "")
    assert (mark.group(1), mark.group(2), mark.group(3)) == ("", "low", url)


def test_the_image_url_may_be_a_plain_string_or_a_responses_api_input_image(folder):
    parts = [
        {"type": "input_text", "text": "Describe:"},
        {"type": "input_image", "image_url": "images/square.png", "detail": "high"},
        {"type": "image_url", "image_url": "images/square.png"},
    ]
    case = case_at(folder, {"input": parts, "output": "two squares"})
    assert [m.group(2) for m in IMAGE_MARK.finditer(case.input or "")] == ["high", ""]
    assert case.images_shown == 2


def test_parts_keep_their_order_joined_by_newlines(folder):
    parts = [text_part("first"), image_part("images/square.png"), text_part("second")]
    case = case_at(folder, {"input": "q", "output": parts})
    assert IMAGE_MARK.sub("[img]", case.output or "") == "first\n[img]\nsecond"


def test_images_in_turns_of_a_conversation_are_read_and_other_turns_left_alone(folder):
    messages = [
        {"role": "user", "content": [text_part("Look:"), image_part("images/square.png")]},
        {"role": "assistant", "content": "A red square."},
        {"role": "user", "content": [text_part("And now?")]},
        {"role": "assistant", "content": "Still red."},
    ]
    case = case_at(folder, {"messages": messages})
    assert case.messages is not None
    assert urls(case.messages[0].content) == [data_url(RED_SQUARE)]
    assert [t.content for t in case.messages[1:]] == ["A red square.", "And now?", "Still red."]
    assert case.images_shown == 1


def test_a_tool_result_may_be_a_screenshot(folder):
    messages = [
        {"role": "user", "content": "Open the page"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "screenshot", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [image_part("images/square.png")]},
        {"role": "assistant", "content": "The page shows a red square."},
    ]
    case = case_at(folder, {"messages": messages})
    assert case.messages is not None
    assert urls(case.messages[2].content) == [data_url(RED_SQUARE)]


def test_text_only_parts_still_read_as_before(folder):
    case = case_at(folder, {"messages": [{"role": "assistant", "content": [text_part("hi")]}]})
    assert case.messages is not None
    assert case.messages[0].content == "hi"
    assert case.images_shown == 0


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            [image_part("images/missing.png")],
            'cases.jsonl:3: "output"[0]: image file images/missing.png not found',
            id="missing-file",
        ),
        pytest.param(
            [image_part("images")],
            'cases.jsonl:3: "output"[0]: image file images cannot be read',
            id="a-folder",
        ),
        pytest.param(
            [image_part("notes.txt")],
            'cases.jsonl:3: "output"[0]: image file notes.txt is not a PNG, JPEG, GIF or WebP',
            id="not-an-image",
        ),
        pytest.param(
            [image_part("data:image/png;base64,%%%")],
            "the data URL's base64 does not decode",
            id="bad-base64",
        ),
        pytest.param(
            [image_part("data:image/svg+xml,<svg/>")],
            "cannot hold spaces, line breaks, < or >",
            id="svg-data-url",
        ),
        pytest.param(
            [image_part("data:text/plain,hello")], "a data URL must be base64", id="not-base64"
        ),
        pytest.param(
            [image_part("ftp://example.com/cat.png")], "of scheme ftp: cannot be sent", id="ftp"
        ),
        pytest.param([image_part("images/my cat.png")], "cannot hold spaces", id="space-in-path"),
        pytest.param([image_part("")], 'an image part needs "image_url"', id="empty-url"),
        pytest.param(
            [image_part("images/square.png", detail="huge")],
            '"detail" must be "low", "high" or "auto"',
            id="bad-detail",
        ),
        pytest.param(
            [image_part("images/square.png"), {"type": "input_audio", "input_audio": {}}],
            "cases.jsonl:3: \"output\"[1]: a part of type 'input_audio' is not read",
            id="audio-part",
        ),
    ],
)
def test_what_cannot_be_read_names_the_file_line_and_part(folder, value, problem):
    (folder / "notes.txt").write_text("not an image")
    with pytest.raises(DatasetError) as caught:
        case_at(folder, {"input": "q", "output": value})
    assert problem in str(caught.value)
    assert caught.value.hint


def test_a_missing_file_names_where_it_was_looked_for(folder):
    with pytest.raises(DatasetError) as caught:
        case_at(folder, {"input": [image_part("images/gone.png")], "output": "x"})
    assert str(folder / "images" / "gone.png") in str(caught.value)
    assert "relative path is read from the dataset's folder" in (caught.value.hint or "")


def test_an_image_over_the_limit_is_refused(folder, monkeypatch):
    monkeypatch.setattr("judgecli.inputs.images.MAX_BYTES", 100)
    with pytest.raises(ImageError, match="judges take images of at most"):
        read_image("images/square.png", "where", folder)


def test_a_text_cannot_forge_an_image(folder):
    # The mark's characters without this process's nonce are text like any other.
    forged = "\ue000deadbeef\ue002\ue002\ue002https://evil.example/x.png\ue001"
    case = case_at(folder, {"input": "q", "output": forged})
    assert case.images_shown == 0
    assert case.output == forged


def test_text_length_counts_no_image():
    text = "abc" + image_mark("x.png", "", data_url(RED_SQUARE)) + "de"
    assert text_length(text) == 5
    assert image_count(text) == 1


def test_the_scan_says_which_selected_cases_show_images(folder):
    rows = [
        {"id": "a", "input": "q", "output": "text only"},
        {"id": "b", "input": [image_part("images/square.png")], "output": "x"},
        {"id": "c", "input": "q", "output": [image_part("images/square.png")]},
    ]
    path = folder / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shown = scan_dataset(path, requires=["input", "output"]).images
    assert shown is not None
    assert (shown.count, shown.first) == (2, f"{path}:2")
    assert scan_dataset(path, requires=["input", "output"], limit=1).images is None


def test_a_pair_shows_images_when_either_side_does(folder):
    old = folder / "old.jsonl"
    new = folder / "new.jsonl"
    old.write_text(json.dumps({"id": "a", "input": "Draw a square", "output": "no"}) + "\n")
    new.write_text(
        json.dumps(
            {"id": "a", "input": "Draw a square", "output": [image_part("images/square.png")]}
        )
        + "\n"
    )
    shown = scan_pairs(old, new, requires=["input", "output"]).images
    assert shown is not None
    assert shown.first == f"{new}:1"


def test_the_bundled_images_are_what_their_script_draws():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_images", REPO / "tests/data/make_images.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, pixel in module.IMAGES.items():
        drawn = module.png(module.SIZE, module.SIZE, pixel)
        assert (REPO / "datasets" / "images" / name).read_bytes() == drawn, name
        assert media_type(drawn) is MediaType.PNG


def test_rows_given_in_memory_keep_their_relative_image_paths_readable(folder):
    # The API keeps such rows in a run directory: a relative path is made the caller's.
    row = {
        "id": "a",
        "question": [text_part("q"), image_part("images/square.png", detail="low")],
        "output": [{"type": "image_url", "image_url": "images/square.png"}],
        "messages": None,
        "reference": [
            image_part("https://example.com/x.png"),
            image_part(data_url(GIF, "image/gif")),
        ],
    }
    kept = anchored_images(row, folder, {"input": "question"})
    square = str(folder / "images" / "square.png")
    assert kept["question"][1] == image_part(square, detail="low")
    assert kept["output"][0]["image_url"] == square
    assert kept["reference"] == row["reference"]
    assert kept["id"] == "a"
    assert row["question"][1] == image_part("images/square.png", detail="low")


def test_a_field_of_text_parts_alone_is_their_text(folder):
    case = case_at(folder, {"input": [text_part("one"), text_part("two")], "output": "x"})
    assert case.input == "one\ntwo"
    assert case.images_shown == 0
