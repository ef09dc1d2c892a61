"""Thumbnails of a case's images in report.html's case view (issue 32): each image the case
showed the judge (results.jsonl's `images`) as a small picture under the case's text, with
a caption that names its field and `[image N]`, its file, type and size.

The page stays one file: an image comes as the data URL results.jsonl keeps (at most 256
KB, result.EMBEDDED_BYTES) or as its http(s) URL, which the browser loads when the page is
opened. A larger image is named and counted, not shown. Only those two kinds of URL reach
an `src`, escaped, so no case text or URL can add markup or script to the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from judgecli.report.escape import esc
from judgecli.result import ShownImage

THUMBNAIL_CSS = (
    ".case-images{display:flex;flex-wrap:wrap;gap:8px}.case-images figure{padding:6px}"
    ".case-images img{display:block;max-width:160px;max-height:160px;min-width:96px;"
    "image-rendering:pixelated}"
)
"""report.html's style of the thumbnails."""
# What an `src` may be: an http(s) URL, or a data URL of one of the four image types.
SHOWABLE = re.compile(r"^(https?://|data:image/(png|jpeg|gif|webp);base64,)", re.IGNORECASE)


def caption(image: ShownImage) -> str:
    """`input [image 1]: photos/cat.png, image/png, 12.3 KB` (what is known of it)."""
    known = [image.file or (image.url if image.url and not image.url.startswith("data:") else "")]
    known.append(image.media_type or "")
    if image.bytes is not None:
        known.append(f"{image.bytes / 1024:.1f} KB" if image.bytes >= 1024 else f"{image.bytes} B")
    said = ", ".join(k for k in known if k)
    return f"{image.field} [image {image.image}]" + (f": {said}" if said else "")


def thumbnail(image: ShownImage) -> str:
    """One image as a figure: the picture when its URL can be shown, else why not."""
    text = caption(image)
    if image.url is not None and SHOWABLE.match(image.url):
        picture = f'<img src="{esc(image.url)}" alt="{esc(text)}" loading="lazy">'
    elif image.url is None:
        picture = '<p class="muted">not shown: larger than results.jsonl keeps (256 KB)</p>'
    else:
        picture = '<p class="muted">not shown: not an http(s) or image data URL</p>'
    return f"<figure>{picture}<figcaption>{esc(text)}</figcaption></figure>"


def thumbnails_html(images: Sequence[ShownImage] | None) -> str:
    """A case's images under its text ("" for a case without images)."""
    if not images:
        return ""
    shown = "".join(thumbnail(image) for image in images)
    return f'<div class="case-field"><h5>images</h5><div class="case-images">{shown}</div></div>'
