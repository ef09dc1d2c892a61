"""Draw the PNGs of datasets/images.jsonl, into datasets/images/ (the project's own
images, under the project's licence).

No imaging library: each image is a few shapes on a white ground, written as an 8-bit RGB
PNG with zlib and struct. `python tests/data/make_images.py` writes them again; the bytes
come out the same every time (tests/unit/inputs/test_images.py checks that they do).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

SIZE = 48
WHITE = (255, 255, 255)
Pixel = tuple[int, int, int]
Shape = Callable[[int, int], Pixel | None]


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """An RGB PNG of the given size, each pixel's colour from `pixel(x, y)`."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def drawn(*shapes: Shape) -> Callable[[int, int], Pixel]:
    """A picture: the first shape that colours a pixel wins, else white."""

    def pixel(x: int, y: int) -> Pixel:
        for shape in shapes:
            colour = shape(x, y)
            if colour is not None:
                return colour
        return WHITE

    return pixel


def square(colour: Pixel) -> Shape:
    """A square in the middle, half the image wide."""
    return lambda x, y: colour if 12 <= x < 36 and 12 <= y < 36 else None


def circle(colour: Pixel) -> Shape:
    """A circle in the middle."""
    return lambda x, y: colour if (x - 23.5) ** 2 + (y - 23.5) ** 2 <= 14**2 else None


def triangle(colour: Pixel) -> Shape:
    """A triangle: its apex at the top middle, its base along y = 38."""
    return lambda x, y: colour if 10 <= y <= 38 and abs(x - 23.5) <= (y - 10) * 0.55 else None


def bar(left: int, height: int, colour: Pixel) -> Shape:
    """A chart's bar, 10 pixels wide, standing on the axis."""
    return lambda x, y: (
        colour if left <= x < left + 10 and SIZE - 6 - height <= y < SIZE - 6 else None
    )


def axis(x: int, y: int) -> Pixel | None:
    """A chart's horizontal axis."""
    return (40, 40, 40) if y == SIZE - 6 and 4 <= x < SIZE - 4 else None


IMAGES: dict[str, Callable[[int, int], Pixel]] = {
    "red-square.png": drawn(square((220, 30, 30))),
    "blue-circle.png": drawn(circle((30, 70, 220))),
    "green-triangle.png": drawn(triangle((30, 160, 60))),
    "bar-chart.png": drawn(
        axis, bar(7, 14, (90, 90, 200)), bar(19, 34, (90, 90, 200)), bar(31, 22, (90, 90, 200))
    ),
}


FOLDER = Path(__file__).resolve().parents[2] / "datasets" / "images"


def main() -> None:
    """Write every image into datasets/images/."""
    for name, pixel in IMAGES.items():
        (FOLDER / name).write_bytes(png(SIZE, SIZE, pixel))


if __name__ == "__main__":
    main()
