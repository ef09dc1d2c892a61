"""Images in a judge's prompt: the user message's text, where a case's images stand as marks
(inputs.images), as OpenAI content parts — text, then each image where the rubric's
template put its field, then the text after it — so the image sits inside its field's
fence. A message without images is sent as a plain string, as before (its cache key and
request body unchanged).

The request carries each image as its URL (a data URL holds the bytes), so the reply
cache's key covers an image's bytes, never its file name; an http(s) URL is keyed by the
URL (judge never fetches it).
"""

from __future__ import annotations

from typing import Any

from judgecli.result import IMAGE_MARK, IMAGE_OPEN

Content = str | list[dict[str, Any]]
"""A chat message's content: a string, or a list of content parts."""


def user_content(text: str) -> Content:
    """A user message's text as it is sent: itself without images, else text and image
    parts in order (an image's `detail`, when the case gave one, kept).
    """
    if IMAGE_OPEN not in text:
        return text
    parts: list[dict[str, Any]] = []
    at = 0
    for mark in IMAGE_MARK.finditer(text):
        if mark.start() > at:
            parts.append({"type": "text", "text": text[at : mark.start()]})
        image = {"url": mark.group(3)}
        if mark.group(2):
            image["detail"] = mark.group(2)
        parts.append({"type": "image_url", "image_url": image})
        at = mark.end()
    if at < len(text):
        parts.append({"type": "text", "text": text[at:]})
    return parts


def system_text(text: str) -> str:
    """A system message's text, which cannot carry an image (providers take images in user
    messages only): the run's checks refuse a rubric whose system template shows a field
    with images (`commands.setup.check_images`), so a mark here is a bug.
    """
    if IMAGE_OPEN in text:
        raise ValueError("an image in the system message: images go in the user message")
    return text
