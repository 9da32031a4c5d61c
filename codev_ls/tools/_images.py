"""Images as model API content blocks, made small enough for the API to take.

The Anthropic Messages API limits (its vision guide, "General limits"): at most
5 MB per image (the base64 data), at most 8000×8000 pixels, and at most
2000×2000 pixels when a request holds more than 20 images; it recommends
about 1.15 megapixels (1568 px on the long side) for latency. A coding session
easily collects 20 images, so images are kept within 2000×2000 and 5 MB of
base64; anything larger is downscaled with Pillow (and re-encoded as JPEG when
PNG stays too heavy). Pillow is imported only when an image is read.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass
from typing import Any

MAX_DIMENSION = 2000
MAX_BASE64_BYTES = 5 * 1024 * 1024
# Pillow refuses to decode more pixels than this (decompression bombs).
MAX_PIXELS = 200_000_000

SUPPORTED = {"image/png", "image/jpeg", "image/gif", "image/webp"}

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
# Other formats Pillow reads; they are converted to PNG.
CONVERTIBLE_SUFFIXES = {".bmp", ".tif", ".tiff", ".ico", ".tga", ".ppm", ".pgm", ".pbm"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", *CONVERTIBLE_SUFFIXES}


class ImageError(ValueError):
    """The bytes are not an image Pillow can decode (the message says why)."""


def sniff_media_type(head: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP from its first bytes."""
    for magic, media in _MAGIC:
        if head.startswith(magic):
            return media
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(slots=True)
class ImageBlock:
    block: dict[str, Any]
    media_type: str
    width: int
    height: int
    original_size: tuple[int, int]
    original_bytes: int
    data_bytes: int

    @property
    def resized(self) -> bool:
        return (self.width, self.height) != self.original_size

    def describe(self) -> str:
        what = f"{self.width}×{self.height} {self.media_type}, {self.data_bytes / 1024:,.0f} KiB"
        if self.resized:
            ow, oh = self.original_size
            what += f"; downscaled from {ow}×{oh} to fit the model API's image limits"
        elif self.data_bytes != self.original_bytes:
            what += f"; re-encoded from {self.original_bytes / 1024:,.0f} KiB"
        return what


def _block(data: bytes, media_type: str) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }


def _b64_len(n: int) -> int:
    return 4 * ((n + 2) // 3)


def image_block(data: bytes) -> ImageBlock:
    """An API image block for ``data``, downscaled/re-encoded only when it must be."""
    media = sniff_media_type(data[:16])
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        img = Image.open(io.BytesIO(data))
        size = img.size
    except Image.DecompressionBombError as exc:
        raise ImageError(
            f"the image is too large to decode safely ({_pillow_message(exc)})"
        ) from exc
    except Image.UnidentifiedImageError as exc:
        raise ImageError("its data is not an image format Pillow knows, or it is damaged") from exc
    except Exception as exc:
        raise ImageError(f"Pillow cannot decode it ({_pillow_message(exc)})") from exc
    w, h = size
    fits = w <= MAX_DIMENSION and h <= MAX_DIMENSION and _b64_len(len(data)) <= MAX_BASE64_BYTES
    if media in SUPPORTED and fits:
        return ImageBlock(_block(data, media), media, w, h, size, len(data), len(data))
    try:
        out, out_media, out_size = _shrink(img, media)
    except Exception as exc:
        raise ImageError(f"it could not be converted ({_pillow_message(exc)})") from exc
    return ImageBlock(
        _block(out, out_media),
        out_media,
        *out_size,
        original_size=size,
        original_bytes=len(data),
        data_bytes=len(out),
    )


_OBJECT_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")


def _pillow_message(exc: Exception) -> str:
    """Pillow's error text without the Python object reprs it puts in (``<_io.BytesIO ...>``)."""
    text = _OBJECT_REPR.sub("", str(exc)).strip().rstrip(":")
    return text or type(exc).__name__


def _shrink(img: Any, media: str | None) -> tuple[bytes, str, tuple[int, int]]:
    """Fit within MAX_DIMENSION and the base64 limit: PNG first (JPEG sources stay JPEG)."""
    from PIL import Image

    if media == "image/jpeg":
        img.draft("RGB", (MAX_DIMENSION, MAX_DIMENSION))  # decode JPEGs at reduced size
    if getattr(img, "is_animated", False):
        img.seek(0)  # the first frame, as the API itself takes of a GIF
    img.load()
    scale = min(1.0, MAX_DIMENSION / max(img.size))
    for _attempt in range(8):
        target = (max(1, int(img.width * scale)), max(1, int(img.height * scale)))
        frame = img if target == img.size else img.resize(target, Image.Resampling.LANCZOS)
        # A PNG at its own size that was too heavy stays too heavy: go straight to JPEG.
        if media != "image/jpeg" and not (media == "image/png" and frame is img):
            png = _encode(frame, "PNG")
            if _b64_len(len(png)) <= MAX_BASE64_BYTES:
                return png, "image/png", frame.size
        for quality in (85, 70, 55):
            jpg = _encode(_rgb(frame), "JPEG", quality=quality)
            if _b64_len(len(jpg)) <= MAX_BASE64_BYTES:
                return jpg, "image/jpeg", frame.size
        scale *= 0.7
    raise ValueError("it stays over the size limit even when small")


def _rgb(img: Any) -> Any:
    from PIL import Image

    if img.mode in ("RGBA", "LA", "P"):
        rgba = img.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.split()[-1])
        return background
    return img.convert("RGB") if img.mode != "RGB" else img


def _encode(img: Any, fmt: str, **kwargs: Any) -> bytes:
    buf = io.BytesIO()
    if fmt == "PNG" and img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        img = img.convert("RGBA")
    img.save(buf, fmt, **kwargs)
    return buf.getvalue()
