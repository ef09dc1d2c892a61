"""Images in cases: content parts with `image_url` in a case's `input`, `output`,
`reference` or `messages` (OpenAI's content-part shape, or the Responses API's
`input_text` / `input_image`), read into the field's text (docs/images.md).

An image is an http(s) URL (sent as it is: judge never fetches it), a data URL, or a file:
a path relative to the dataset's folder (or absolute, or `file://`), read and sent as a
data URL with the MIME type its bytes say (PNG, JPEG, GIF or WebP, what vision judges
take). A data URL is checked the same way and re-encoded with the type its bytes say. In
the field's text an image is a mark (`result.IMAGE_MARK`: its file, detail and URL) where
the parts put it, text parts and images joined by newlines; `grading.images` turns the
marks into image parts of the judge's message, and a result shows `[image N]` instead.
What cannot be read is an ImageError the row's reader reports with file:line and the fix.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from judgecli.inputs.rows import RowSource
from judgecli.inputs.shape_error import ShapeError
from judgecli.result import IMAGE_MARK, IMAGE_OPEN


class MediaType(StrEnum):
    """The image types vision judges take, told by their first bytes."""

    PNG = "image/png"
    JPEG = "image/jpeg"
    GIF = "image/gif"
    WEBP = "image/webp"


MAX_BYTES = 20 * 1024 * 1024
"""The largest image read: OpenAI's limit for one image (Anthropic's is lower, 5 MB)."""
IMAGE_TOKENS = 765
"""An image's tokens in estimates: OpenAI's count for a 1024×1024 image at high detail (85
+ 4 tiles × 170); what a provider really counts depends on its size and the provider."""
IMAGE_FIELDS = ("input", "output", "reference")
"""The text fields that may be given as content parts (besides each turn of `messages`)."""
TEXT_TYPES = frozenset({"text", "input_text"})
IMAGE_TYPES = frozenset({"image_url", "input_image"})
DETAILS = frozenset({"low", "high", "auto"})
# A URL scheme: two letters or more (a single letter is a Windows drive, `C:\...`).
SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
# What a URL or a path cannot hold: it would end the mark or a prompt's fence early.
UNSAFE = re.compile(r"[\s<>\ue000-\uf8ff]")
PARTS_SHAPE = (
    '[{"type": "text", "text": "What is in this picture?"}, '
    '{"type": "image_url", "image_url": {"url": "images/cat.png"}}]'
)


class ImageError(ShapeError):
    """Content parts or an image that cannot be read; the message says what, the hint how."""


def media_type(data: bytes) -> MediaType | None:
    """The image type its first bytes say (None: none of the four)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return MediaType.PNG
    if data.startswith(b"\xff\xd8\xff"):
        return MediaType.JPEG
    if data.startswith((b"GIF87a", b"GIF89a")):
        return MediaType.GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return MediaType.WEBP
    return None


def data_url(data: bytes, where: str, name: str) -> str:
    """An image's bytes as a data URL of the type they say, or ImageError naming `name`."""
    if len(data) > MAX_BYTES:
        raise ImageError(
            f"{where}: {name} is {len(data) / 2**20:.1f} MB; judges take images of at most "
            f"{MAX_BYTES // 2**20} MB",
            hint="shrink or compress the image",
        )
    kind = media_type(data)
    if kind is None:
        raise ImageError(
            f"{where}: {name} is not a PNG, JPEG, GIF or WebP image",
            hint="vision judges take these four: convert the image to one of them",
        )
    return f"data:{kind.value};base64,{base64.b64encode(data).decode('ascii')}"


def image_mark(file: str, detail: str, url: str) -> str:
    """An image as its field's text holds it (result.IMAGE_MARK)."""
    return f"{IMAGE_OPEN}{file}\ue002{detail}\ue002{url}\ue001"


def read_image(url: str, where: str, base: Path) -> tuple[str, str]:
    """An image reference as (the file it names, "" for a URL; the URL to send): an http(s)
    URL as it is, a data URL re-encoded with its bytes' type, a file read (a relative path
    from `base`, the dataset's folder) as a data URL. ImageError names what is wrong.
    """
    if UNSAFE.search(url):
        raise ImageError(
            f"{where}: an image URL or path cannot hold spaces, line breaks, < or >",
            hint="percent-encode them in a URL (%20, %3C, %3E), or rename the file",
        )
    scheme = SCHEME.match(url)
    kind = scheme.group(1).lower() if scheme else None
    if kind in ("http", "https"):
        return "", url
    if kind == "data":
        return "", data_url(data_bytes(url, where), where, "the data URL")
    if kind not in (None, "file"):
        raise ImageError(
            f"{where}: an image URL of scheme {kind}: cannot be sent to a judge",
            hint="give an http(s) URL, a data: URL, or a path relative to the dataset's folder",
        )
    name = url.removeprefix("file://") if kind == "file" else url
    path = base / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(
            f"{where}: image file {name} not found (looked for {path})",
            hint="a relative path is read from the dataset's folder: write the path from "
            "there, or give an http(s) or data: URL",
        ) from None
    except OSError as err:
        raise ImageError(
            f"{where}: image file {name} cannot be read: {err.strerror or err}",
            hint="check that it is a file this user may read",
        ) from None
    return name, data_url(data, where, f"image file {name}")


def data_bytes(url: str, where: str) -> bytes:
    """The bytes of a base64 data URL, or ImageError."""
    head, comma, payload = url.partition(",")
    if not comma or not head.lower().endswith(";base64"):
        raise ImageError(
            f"{where}: a data URL must be base64, e.g. data:image/png;base64,iVBORw0KG...",
            hint="encode the image in base64, or give its file's path",
        )
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(
            f"{where}: the data URL's base64 does not decode",
            hint="encode the image's bytes in base64 (standard alphabet, with = padding)",
        ) from None


def part_image(part: dict[str, Any], where: str) -> tuple[str, str]:
    """An image part's (URL, detail): `{"type": "image_url", "image_url": {"url": ...,
    "detail": ...}}` (or the URL as a string), or the Responses API's `input_image`.
    """
    value = part.get("image_url")
    detail = part.get("detail")
    if isinstance(value, dict):
        detail = value.get("detail", detail)
        value = value.get("url")
    if not isinstance(value, str) or not value.strip():
        raise ImageError(
            f'{where}: an image part needs "image_url": {{"url": "..."}}',
            hint=f"write the parts as {PARTS_SHAPE}",
        )
    if detail is not None and detail not in DETAILS:
        raise ImageError(
            f'{where}: "detail" must be "low", "high" or "auto", got {detail!r}',
            hint='drop "detail" to let the judge choose',
        )
    return value.strip(), detail or ""


def read_parts(parts: list[Any], where: str, base: Path) -> str:
    """A list of content parts as its field's text: text parts and image marks in order,
    joined by newlines (ImageError naming the first part that cannot be read).
    """
    pieces = []
    for i, part in enumerate(parts):
        at = f"{where}[{i}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_TYPES and isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif kind in IMAGE_TYPES:
            url, detail = part_image(part, at)
            file, sent = read_image(url, at, base)
            pieces.append(image_mark(file, detail, sent))
        else:
            shown = f"a part of type {kind!r}" if kind else "a part without a type"
            raise ImageError(
                f"{at}: {shown} is not read (content parts are text and images)",
                hint=f"write the parts as {PARTS_SHAPE}",
            )
    return "\n".join(pieces)


def content_parts(value: Any) -> bool:
    """Whether a field's value is a list of content parts (objects with a "type")."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in value)
    )


def shows_image(value: Any) -> bool:
    """Whether a field's value is a list of content parts with an image among them."""
    return isinstance(value, list) and any(
        isinstance(part, dict) and part.get("type") in IMAGE_TYPES for part in value
    )


def read_row_images(
    source: RowSource, number: int, values: dict[str, Any], field_map: Mapping[str, str]
) -> None:
    """A row's content parts read in place: a field given as parts becomes its text (with
    its images' marks), and so does each turn of `messages` that shows an image (a turn of
    text parts only is its reader's, conversation.content_text); DatasetError naming the
    row and the fix for what cannot be read.
    """
    base = source.path.parent
    try:
        for name in IMAGE_FIELDS:
            if content_parts(values.get(name)):
                where = f'"{field_map.get(name, name)}"'
                values[name] = read_parts(values[name], where, base)
        turns = values.get("messages")
        if isinstance(turns, list) and any(
            isinstance(t, dict) and shows_image(t.get("content")) for t in turns
        ):
            key = field_map.get("messages", "messages")
            values["messages"] = [
                {**t, "content": read_parts(t["content"], f'"{key}"[{i}].content', base)}
                if isinstance(t, dict) and shows_image(t.get("content"))
                else t
                for i, t in enumerate(turns)
            ]
    except ImageError as err:
        raise source.error(number, err.problem, hint=err.hint) from None


def anchored_images(
    row: Mapping[str, Any], base: Path, field_map: Mapping[str, str]
) -> dict[str, Any]:
    """A row whose image parts name files relative to `base` (a dataset given in memory,
    whose rows are kept in a run directory): each such path made absolute, so that the
    kept rows read the same files from there. Anything else is left as it is.
    """

    def anchored(parts: list[Any]) -> list[Any]:
        fixed = []
        for part in parts:
            url = part.get("image_url") if isinstance(part, dict) else None
            url = url.get("url") if isinstance(url, dict) else url
            if isinstance(url, str) and not SCHEME.match(url) and not Path(url).is_absolute():
                whole = str((base / url).absolute())
                value = part["image_url"]
                part = {
                    **part,
                    "image_url": {**value, "url": whole} if isinstance(value, dict) else whole,
                }
            fixed.append(part)
        return fixed

    out = dict(row)
    for name in IMAGE_FIELDS:
        key = field_map.get(name, name)
        if shows_image(out.get(key)):
            out[key] = anchored(out[key])
    key = field_map.get("messages", "messages")
    if isinstance(out.get(key), list):
        out[key] = [
            {**t, "content": anchored(t["content"])}
            if isinstance(t, dict) and shows_image(t.get("content"))
            else t
            for t in out[key]
        ]
    return out


def image_count(text: str | None) -> int:
    """How many images a field's text shows."""
    if not text or IMAGE_OPEN not in text:
        return 0
    return len(IMAGE_MARK.findall(text))


def text_length(text: str) -> int:
    """Characters of a text's own words: an image counts none (its data URL is no text)."""
    if IMAGE_OPEN not in text:
        return len(text)
    return len(IMAGE_MARK.sub("", text))


@dataclass(frozen=True)
class ImagesShown:
    """The selected cases of a scan that show images: how many, and where the first is."""

    count: int
    first: str
    """`file:line` of the first (a pair's: the side that shows one)."""


class ImageCases:
    """Notes the cases of a scan that show images, by the line the scan selects them by,
    so that only the selected ones count (a run of the text cases needs no vision judge).
    """

    def __init__(self) -> None:
        self._where: dict[int, str] = {}

    def note(self, shows: int, line: int, where: str) -> None:
        """A case selected by `line` that `shows` images (their count), at `where`
        (`file:line`).
        """
        if shows:
            self._where.setdefault(line, where)

    def shown(self, selected: Iterable[int]) -> ImagesShown | None:
        """The selected cases that show images (None: none does)."""
        found = [self._where[line] for line in selected if line in self._where]
        return ImagesShown(len(found), found[0]) if found else None
