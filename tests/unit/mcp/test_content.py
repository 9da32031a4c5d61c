"""MCP result content → model API content blocks."""

from __future__ import annotations

import base64
from pathlib import Path

from codev_ls.mcp.content import blob_saver, map_result_content, result_text

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_all_text_collapses_to_one_string() -> None:
    result = {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert map_result_content(result, server="s") == "a\nb"


def test_image_becomes_an_image_block() -> None:
    result = {
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ]
    }
    blocks = map_result_content(result, server="s")
    assert blocks == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]


def test_embedded_text_resource_is_text_naming_it() -> None:
    result = {
        "content": [
            {
                "type": "resource",
                "resource": {"uri": "demo://r/1", "mimeType": "text/plain", "text": "hello"},
            }
        ]
    }
    assert map_result_content(result, server="docs") == "[Resource from docs at demo://r/1] hello"


def test_binary_resource_and_audio_are_saved_and_the_path_given(tmp_path: Path) -> None:
    blob = base64.b64encode(b"\x00\x01\x02binary").decode()
    result = {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "demo://files/report.pdf",
                    "mimeType": "application/pdf",
                    "blob": blob,
                },
            },
            {
                "type": "audio",
                "data": base64.b64encode(b"RIFFxxxxWAVE").decode(),
                "mimeType": "audio/wav",
            },
        ]
    }
    text = map_result_content(result, server="s", save_blob=blob_saver(tmp_path))
    assert isinstance(text, str)
    saved = sorted(tmp_path.iterdir())
    assert len(saved) == 2
    pdf = next(p for p in saved if p.suffix == ".pdf")
    assert pdf.read_bytes() == b"\x00\x01\x02binary"
    assert pdf.name.startswith("report.pdf")
    assert str(pdf) in text and "application/pdf" in text and "9 bytes" in text
    wav = next(p for p in saved if p.suffix == ".wav")
    assert str(wav) in text and "audio" in text


def test_binary_image_resource_is_an_image_block() -> None:
    result = {
        "content": [
            {
                "type": "resource",
                "resource": {"uri": "x://a.png", "mimeType": "image/png", "blob": PNG},
            }
        ]
    }
    (block,) = map_result_content(result, server="s")
    assert block["type"] == "image" and block["source"]["data"] == PNG


def test_unsupported_image_type_and_bad_base64_are_described_not_sent() -> None:
    result = {
        "content": [
            {"type": "image", "data": "!!!not base64!!!", "mimeType": "image/png"},
            {
                "type": "image",
                "data": base64.b64encode(b"<svg/>").decode(),
                "mimeType": "image/svg+xml",
            },
        ]
    }
    text = map_result_content(result, server="s")
    assert isinstance(text, str)
    assert "invalid base64" in text
    assert "image/svg+xml" in text and "not shown" in text


def test_resource_link_and_unknown_kinds() -> None:
    result = {
        "content": [
            {
                "type": "resource_link",
                "uri": "file:///a.md",
                "name": "a",
                "mimeType": "text/markdown",
                "description": "the readme",
            },
            {"type": "hologram"},
        ]
    }
    text = map_result_content(result, server="s")
    assert "[Resource link: a] file:///a.md (text/markdown) — the readme" in text
    assert "[hologram content from s, not shown]" in text


def test_structured_content_when_there_is_no_content() -> None:
    result = {"content": [], "structuredContent": {"temperature": 21.5, "unit": "C"}}
    assert map_result_content(result, server="s") == '{"temperature": 21.5, "unit": "C"}'


def test_empty_result_is_empty_text() -> None:
    assert map_result_content({"content": []}, server="s") == ""


def test_result_text_for_errors() -> None:
    result = {"content": [{"type": "text", "text": "bad thing"}, {"type": "image", "data": ""}]}
    assert result_text(result) == "bad thing\n[image]"
