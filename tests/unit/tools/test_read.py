"""Read through the whole lifecycle: text windows, huge files, PDF, images, notebooks."""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.runtime import Engine
from codev_ls.tools import _lines, read
from codev_ls.tools._filestate import state_key
from tests.fakes.pdfgen import ImagePage, make_pdf

from .conftest import Runner

# ---------------------------------------------------------------- text


async def test_numbered_lines_and_window(run: Runner, workspace: Path):
    path = workspace / "f.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    out = await run.read(path)
    assert out.text().startswith("     1\tline 1\n     2\tline 2\n")
    assert "   100\tline 100" in out.text()
    assert "Showing" not in out.text()
    out = await run.read(path, offset=10, limit=3)
    assert out.text() == (
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n\n"
        "(Showing lines 10–12 of 100. Use offset/limit to read more.)"
    )


async def test_default_limit_is_2000_lines(run: Runner, workspace: Path):
    path = workspace / "long.txt"
    path.write_text("x\n" * 2500)
    out = await run.read(path)
    assert "  2000\tx" in out.text() and "  2001\t" not in out.text()
    assert "(Showing lines 1–2,000 of 2,500." in out.text()


async def test_last_line_without_newline_and_crlf(run: Runner, workspace: Path):
    path = workspace / "w.txt"
    path.write_bytes(b"a\r\nb\r\nc")
    out = await run.read(path)
    assert out.text() == "     1\ta\n     2\tb\n     3\tc"


async def test_long_lines_are_cut(run: Runner, workspace: Path):
    path = workspace / "min.js"
    path.write_text("y" * 5000 + "\nshort\n")
    out = await run.read(path)
    first = out.text().split("\n")[0]
    assert first.startswith("     1\t" + "y" * 2000 + "… [line cut: 5,000 bytes]")
    assert "     2\tshort" in out.text()


async def test_empty_file_says_so(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "empty.txt"
    path.write_bytes(b"")
    out = await run.read(path)
    assert "exists but is empty" in out.text()
    assert state_key(path) in engine.session.read_state


async def test_offset_past_the_end(run: Runner, workspace: Path):
    path = workspace / "s.txt"
    path.write_text("a\nb\n")
    out = await run.read(path, offset=10)
    assert "has 2 lines; offset 10 is past its end" in out.text()


async def test_missing_file_suggests_similar_names(run: Runner, workspace: Path):
    (workspace / "config.yaml").write_text("x")
    (workspace / "main.py").write_text("x")
    out = await run("Read", file_path=str(workspace / "config.yml"))
    assert out.status == "error"
    assert f"Did you mean {workspace / 'config.yaml'}?" in out.text()
    out = await run("Read", file_path=str(workspace / "main.ts"))
    assert str(workspace / "main.py") in out.text()
    out = await run("Read", file_path=str(workspace / "nowhere" / "x.txt"))
    assert "does not exist either" in out.text()


async def test_relative_path_and_directory(run: Runner, workspace: Path):
    out = await run("Read", file_path="src/a.py")
    assert out.status == "error" and str(workspace / "src/a.py") in out.text()
    out = await run("Read", file_path=str(workspace))
    assert out.status == "error" and "is a directory" in out.text()


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 100, "an ELF executable"),
        (b"PK\x03\x04\x14\x00\x00\x00" + b"\x00" * 50, "a ZIP archive"),
        (b"SQLite format 3\x00" + b"\x00" * 100, "an SQLite database"),
        (b"\x01\x02\x00\x03junk", "binary data (.dat file)"),
    ],
)
async def test_binary_files_are_refused_naming_the_type(
    run: Runner, workspace: Path, data: bytes, kind: str
):
    path = workspace / "thing.dat"
    path.write_bytes(data)
    out = await run("Read", file_path=str(path))
    assert out.status == "error"
    assert f"is a binary file ({kind}" in out.text()


async def test_random_bytes_without_nul_are_refused_as_binary(run: Runner, workspace: Path):
    import random

    rng = random.Random(5)
    data = bytes(rng.choice(range(1, 256)) for _ in range(4096))
    assert b"\x00" not in data
    path = workspace / "noise.bin"
    path.write_bytes(data)
    out = await run("Read", file_path=str(path))
    assert out.status == "error" and "is a binary file (binary data (.bin file)" in out.text()
    edit = await run("Edit", file_path=str(path), old_string="a", new_string="b")
    assert edit.status == "error" and "binary" in edit.text()


async def test_text_with_some_control_bytes_is_still_text(run: Runner, workspace: Path):
    # Hive-style \x01 field separators, terminal colours, a Latin-1 file with a C1 byte.
    path = workspace / "table.txt"
    path.write_bytes(b"id\x01name\x01city\n" + b"1\x01Ann\x01Paris\n" * 50)
    assert "1\x01Ann\x01Paris" in (await run.read(path)).text()
    path = workspace / "log.txt"
    path.write_bytes(b"\x1b[31mred\x1b[0m done\a\n" * 20)
    assert "red" in (await run.read(path)).text()
    path = workspace / "legacy.txt"
    path.write_bytes(b"caf\xe9 \x81 r\xe9sum\xe9 of the na\xefve\n" * 10)
    assert "café" in (await run.read(path)).text()


async def test_utf16_and_legacy_encodings(run: Runner, workspace: Path):
    path = workspace / "u16.txt"
    path.write_bytes("hé\r\nwörld\r\n".encode("utf-16"))
    out = await run.read(path)
    assert out.text() == "     1\thé\n     2\twörld"
    path = workspace / "cp.txt"
    path.write_bytes("naïve – “quoted”\n".encode("cp1252"))
    out = await run.read(path)
    assert out.text() == "     1\tnaïve – “quoted”"
    path = workspace / "bom.txt"
    path.write_bytes("\ufefffirst\nsecond\n".encode())
    out = await run.read(path)
    assert out.text() == "     1\tfirst\n     2\tsecond"


async def test_open_buffer_is_read_as_the_user_sees_it(
    run: Runner, workspace: Path, bridge: ScriptedBridge, engine: Engine
):
    path = workspace / "b.py"
    path.write_text("on disk\n")
    bridge.open_buffer(path, "in the buffer\nunsaved\n", version=7)
    out = await run.read(path)
    assert out.text() == "     1\tin the buffer\n     2\tunsaved"
    record = engine.session.read_state[state_key(path)]
    assert record.buffer_version == 7 and not record.partial


async def test_buffer_of_an_unsaved_new_file(run: Runner, workspace: Path, bridge: ScriptedBridge):
    path = workspace / "untitled.py"
    bridge.open_buffer(path, "x = 1\n")
    out = await run.read(path)
    assert out.text() == "     1\tx = 1"


async def test_read_records_the_content_hash_and_window(
    run: Runner, workspace: Path, engine: Engine
):
    import hashlib

    path = workspace / "r.txt"
    path.write_text("a\nb\nc\n")
    await run.read(path, offset=2, limit=1)
    record = engine.session.read_state[state_key(path)]
    assert record.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record.partial is True
    assert record.mtime_ns == path.stat().st_mtime_ns and record.size == 6


# ---------------------------------------------------------------- huge files


@pytest.fixture
def small_huge_limit(monkeypatch: pytest.MonkeyPatch):
    """Treat files over 64 KiB as huge so the sparse-index path runs on small test files."""
    monkeypatch.setattr(read, "HASH_LIMIT_BYTES", 64 * 1024)
    monkeypatch.setattr(_lines, "BLOCK", 1024)
    _lines.clear_cache()
    yield
    _lines.clear_cache()


async def test_huge_file_windows_match_the_lines_at_any_offset(
    run: Runner, workspace: Path, small_huge_limit: None, engine: Engine
):
    rng = random.Random(5)
    lines = ["" if rng.random() < 0.1 else "w" * rng.randrange(1, 300) for _ in range(3000)]
    lines = [f"{i}:{s}" for i, s in enumerate(lines, 1)]
    path = workspace / "big.log"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > 64 * 1024
    for offset in [1, 2, 999, 1500, 2990, 3000, 1234, 7, 2999]:
        out = await run.read(path, offset=offset, limit=5)
        want = [f"{n:>6}\t{lines[n - 1]}" for n in range(offset, min(offset + 5, 3001))]
        assert out.text().split("\n\n")[0] == "\n".join(want), offset
    out = await run.read(path, offset=3001)
    assert "offset 3,001 is past its end" in out.text()
    record = engine.session.read_state[state_key(path)]
    assert record.digest is None and record.partial


async def test_huge_file_first_window_does_not_count_the_whole_file(
    run: Runner, workspace: Path, small_huge_limit: None, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(_lines, "BACKGROUND_LIMIT", 0)  # no counting ahead in the background
    path = workspace / "big.txt"
    path.write_text("".join(f"row {i}\n" for i in range(1, 40_001)))
    out = await run.read(path, limit=3)
    assert "(Showing lines 1–3; the file goes on." in out.text()
    st = path.stat()
    index = _lines.index_for(str(path), st)
    assert index.scanned < st.st_size
    out = await run.read(path, offset=39_999)
    assert out.text().startswith(" 39999\trow 39999\n 40000\trow 40000\n")
    assert "of 40,000." in out.text()


async def test_huge_file_is_counted_to_the_end_in_the_background(
    run: Runner, workspace: Path, small_huge_limit: None
):
    path = workspace / "big.txt"
    path.write_text("".join(f"row {i}\n" for i in range(1, 30_001)))
    await run.read(path, limit=3)
    index = _lines.index_for(str(path), path.stat())
    assert index.background is not None
    index.background.join(timeout=30)
    assert index.complete
    out = await run.read(path, offset=10, limit=1)
    assert (
        out.text()
        == "    10\trow 10\n\n(Showing lines 10–10 of 30,000. Use offset/limit to read more.)"
    )


async def test_huge_file_index_is_rebuilt_when_the_file_changes(
    run: Runner, workspace: Path, small_huge_limit: None
):
    path = workspace / "grow.log"
    path.write_text("".join(f"a{i}\n" for i in range(20_000)))
    await run.read(path, offset=15_000, limit=1)
    path.write_text("".join(f"b{i}\n" for i in range(30_000)))
    out = await run.read(path, offset=25_001, limit=1)
    assert out.text().startswith(" 25001\tb25000")


async def test_a_huge_single_line_is_cut_in_flat_memory(
    run: Runner, workspace: Path, small_huge_limit: None
):
    path = workspace / "one-line.json"
    path.write_bytes(b"[" + b"1," * 200_000 + b"1]\nnext\n")
    out = await run.read(path)
    assert "… [line cut: 400,003 bytes]" in out.text()
    assert "     2\tnext" in out.text()


def test_line_index_against_splitlines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_lines, "BLOCK", 64)
    rng = random.Random(11)
    for trial in range(30):
        text = "".join(
            rng.choice(["a", "bb", "\n", "\n\n", "ccc"]) for _ in range(rng.randrange(0, 400))
        )
        data = text.encode()
        path = tmp_path / f"t{trial}"
        path.write_bytes(data)
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        index = _lines.LineIndex(len(data))
        with open(path, "rb") as fh:
            for n in range(1, len(lines) + 3):
                pos = index.line_offset(fh, n)
                if n > len(lines):
                    assert pos is None or pos == len(data), (trial, n)
                    continue
                got, _ = _lines.read_lines_at(fh, pos, 2, 1000)
                assert [g.data for g in got] == lines[n - 1 : n + 1], (trial, n)
            index.extend(fh, 10**9)
            assert index.total_lines(fh) == len(lines)


# ---------------------------------------------------------------- PDF


async def test_pdf_text_per_page(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "doc.pdf"
    path.write_bytes(make_pdf(["Title page\nby Codev", "Chapter one (intro)", "The end"]))
    out = await run.read(path)
    text = out.text()
    assert "PDF" in text and "(3 pages); showing pages 1-3" in text
    assert "--- Page 1 of 3 ---\nTitle page\nby Codev" in text
    assert "--- Page 2 of 3 ---\nChapter one (intro)" in text
    assert state_key(path) in engine.session.read_state


async def test_pdf_pages_range(run: Runner, workspace: Path):
    path = workspace / "doc.pdf"
    path.write_bytes(make_pdf([f"page number {i}" for i in range(1, 31)]))
    out = await run("Read", file_path=str(path))
    assert out.status == "error"
    assert "30 pages, too many to read at once" in out.text() and 'pages "1-10"' in out.text()
    out = await run.read(path, pages="12-13")
    assert "--- Page 12 of 30 ---\npage number 12" in out.text()
    assert "page number 14" not in out.text()
    out = await run.read(path, pages="2,29-30")
    assert "showing pages 2, 29-30" in out.text()
    out = await run("Read", file_path=str(path), pages="31")
    assert out.status == "error" and "page 31 does not exist" in out.text()
    out = await run("Read", file_path=str(path), pages="1-25")
    assert out.status == "error" and "at most 20 pages" in out.text()
    out = await run("Read", file_path=str(path), pages="first")
    assert out.status == "error" and 'look like "3", "1-5"' in out.text()


async def test_pages_only_for_pdfs(run: Runner, workspace: Path):
    path = workspace / "t.txt"
    path.write_text("x")
    out = await run("Read", file_path=str(path), pages="1")
    assert out.status == "error" and "only for PDF" in out.text()


async def test_scanned_pdf_page_comes_with_its_image(run: Runner, workspace: Path):
    path = workspace / "scan.pdf"
    rgb = bytes([30, 144, 255]) * (50 * 40)
    path.write_bytes(make_pdf(["text page", ImagePage(50, 40, rgb)]))
    out = await run.read(path)
    assert isinstance(out.content, list)
    images = [b for b in out.content if b["type"] == "image"]
    assert len(images) == 1
    img = Image.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"])))
    assert img.size == (50, 40)
    assert "no text on this page" in out.text() and "1 image(s) of it follow" in out.text()


async def test_broken_pdf_is_a_clear_error(run: Runner, workspace: Path):
    path = workspace / "bad.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not really a pdf\n")
    out = await run("Read", file_path=str(path))
    assert out.status == "error" and "not a readable PDF" in out.text()


# ---------------------------------------------------------------- images


def _png(size: tuple[int, int], color=(255, 0, 0), mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, color).save(buf, "PNG")
    return buf.getvalue()


def _image_of(out) -> tuple[Image.Image, str]:
    assert isinstance(out.content, list)
    block = next(b for b in out.content if b["type"] == "image")
    assert block["source"]["type"] == "base64"
    data = base64.b64decode(block["source"]["data"])
    return Image.open(io.BytesIO(data)), block["source"]["media_type"]


async def test_png_is_an_image_block(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "shot.png"
    data = _png((120, 80))
    path.write_bytes(data)
    out = await run.read(path)
    img, media = _image_of(out)
    assert media == "image/png" and img.size == (120, 80)
    block = next(b for b in out.content if b["type"] == "image")
    assert base64.b64decode(block["source"]["data"]) == data  # small images are sent as they are
    assert "120×80 image/png" in out.text()
    assert state_key(path) in engine.session.read_state


@pytest.mark.parametrize(
    ("fmt", "media"), [("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
)
async def test_other_formats_keep_their_media_type(
    run: Runner, workspace: Path, fmt: str, media: str
):
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (0, 128, 0)).save(buf, fmt)
    path = workspace / f"img.{fmt.lower()}"
    path.write_bytes(buf.getvalue())
    img, got = _image_of(await run.read(path))
    assert got == media and img.size == (64, 48)


async def test_media_type_is_sniffed_not_taken_from_the_name(run: Runner, workspace: Path):
    path = workspace / "actually-png.jpg"
    path.write_bytes(_png((10, 10)))
    _img, media = _image_of(await run.read(path))
    assert media == "image/png"


async def test_bmp_is_converted_to_png(run: Runner, workspace: Path):
    buf = io.BytesIO()
    Image.new("RGB", (30, 20), (1, 2, 3)).save(buf, "BMP")
    path = workspace / "old.bmp"
    path.write_bytes(buf.getvalue())
    img, media = _image_of(await run.read(path))
    assert media == "image/png" and img.size == (30, 20)


async def test_large_image_is_downscaled_within_the_api_limits(run: Runner, workspace: Path):
    path = workspace / "huge.png"
    path.write_bytes(_png((4000, 1000), (10, 200, 30)))
    out = await run.read(path)
    img, _media = _image_of(out)
    assert img.size == (2000, 500)
    assert "downscaled from 4000×1000" in out.text()


async def test_heavy_noise_png_is_reencoded_under_5mb(run: Runner, workspace: Path):
    rng = random.Random(3)
    noise = Image.frombytes("RGB", (1400, 1400), rng.randbytes(1400 * 1400 * 3))
    buf = io.BytesIO()
    noise.save(buf, "PNG")
    assert len(buf.getvalue()) * 4 / 3 > 5 * 1024 * 1024
    path = workspace / "noise.png"
    path.write_bytes(buf.getvalue())
    out = await run.read(path)
    block = next(b for b in out.content if b["type"] == "image")
    assert len(block["source"]["data"]) <= 5 * 1024 * 1024
    img, media = _image_of(out)
    assert media == "image/jpeg" and max(img.size) <= 2000


async def test_corrupt_image_is_a_clear_error(run: Runner, workspace: Path):
    path = workspace / "broken.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    out = await run("Read", file_path=str(path))
    assert out.status == "error" and "cannot be read" in out.text()
    assert "BytesIO" not in out.text() and " at 0x" not in out.text()
    # Data Pillow cannot identify at all (its message names a BytesIO object).
    path = workspace / "fake.gif"
    path.write_bytes(b"GIF89a" + b"\xff" * 40)
    out = await run("Read", file_path=str(path))
    assert out.status == "error", out.text()
    assert "BytesIO" not in out.text() and " at 0x" not in out.text(), out.text()


async def test_offset_zero_reads_from_the_first_line(run: Runner, workspace: Path):
    path = workspace / "a.txt"
    path.write_text("one\ntwo\n")
    out = await run.read(path, offset=0, limit=1)
    assert out.text().startswith("     1\tone")
    negative = await run("Read", file_path=str(path), offset=-1)
    assert negative.status == "error" and "offset" in negative.text()


# ---------------------------------------------------------------- notebooks


def _notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Py"}
    png = base64.b64encode(_png((16, 16), (0, 0, 255))).decode()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="intro"),
        nbformat.v4.new_code_cell(
            "print('hi')\n1 + 1",
            id="calc",
            execution_count=1,
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text="hi\n"),
                nbformat.v4.new_output(
                    "execute_result", data={"text/plain": "2"}, execution_count=1
                ),
            ],
        ),
        nbformat.v4.new_code_cell(
            "plot()",
            id="plot",
            outputs=[
                nbformat.v4.new_output(
                    "display_data", data={"image/png": png, "text/plain": "<Figure>"}
                )
            ],
        ),
        nbformat.v4.new_code_cell(
            "1/0",
            id="boom",
            outputs=[
                nbformat.v4.new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                )
            ],
        ),
    ]
    return nb


async def test_notebook_cells_outputs_and_images(run: Runner, workspace: Path, engine: Engine):
    path = workspace / "nb.ipynb"
    nbformat.write(_notebook(), str(path))
    out = await run.read(path)
    text = out.text()
    assert "Notebook" in text and "(4 cells, python)" in text
    assert '<cell id="intro" index=0 type=markdown>\n# Title\n</cell>' in text
    assert (
        "<cell id=\"calc\" index=1 type=code execution_count=1>\nprint('hi')\n1 + 1\n</cell>"
        in text
    )
    assert "<output>\nhi\n</output>" in text and "<output>\n2\n</output>" in text
    assert "ZeroDivisionError: division by zero" in text and "\x1b[" not in text
    images = [b for b in out.content if b["type"] == "image"]
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    assert state_key(path) in engine.session.read_state


async def test_notebook_cell_window(run: Runner, workspace: Path):
    path = workspace / "nb.ipynb"
    nbformat.write(_notebook(), str(path))
    out = await run.read(path, offset=2, limit=1)
    assert (
        'id="calc"' in out.text()
        and 'id="intro"' not in out.text()
        and 'id="plot"' not in out.text()
    )
    assert "Showing cells 2–2 of 4" in out.text()


async def test_invalid_notebook_is_a_clear_error(run: Runner, workspace: Path):
    path = workspace / "bad.ipynb"
    path.write_text("{not json")
    out = await run("Read", file_path=str(path))
    assert out.status == "error" and "not a valid Jupyter notebook" in out.text()


def test_traits(engine: Engine):
    tool = next(t for t in engine.tool_pool() if t.name == "Read")
    inp = tool.parse_input({"file_path": "/x"})
    assert tool.is_read_only(inp) and tool.is_concurrency_safe(inp) and not tool.is_destructive(inp)


def test_read_lines_at_across_chunks_with_cuts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_lines, "_WINDOW_READ", 7)
    rng = random.Random(2)
    for trial in range(200):
        text = "".join(
            rng.choice(["a", "bbbbbbbbbbbb", "\n", "cc"]) for _ in range(rng.randrange(0, 60))
        )
        data = text.encode()
        path = tmp_path / "f"
        path.write_bytes(data)
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        count = rng.randrange(1, 12)
        with open(path, "rb") as fh:
            got, end = _lines.read_lines_at(fh, 0, count, 5)
        want = lines[:count]
        assert [g.data for g in got] == [w[:5] for w in want], (trial, text)
        assert [g.full_length for g in got] == [len(w) for w in want], (trial, text)
        assert end == min(len(data), sum(len(w) + 1 for w in want)), (trial, text)


async def test_a_named_pipe_is_refused_not_waited_on(run: Runner, workspace: Path):
    import os

    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    out = await run("Read", file_path=str(fifo))
    assert out.status == "error" and "not a regular file" in out.text()
    out = await run("Write", file_path=str(fifo), content="x")
    assert out.status == "error" and "not a regular file" in out.text()


def test_background_counting_gives_way_to_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import time

    monkeypatch.setattr(_lines, "BLOCK", 1024)
    path = tmp_path / "f.log"
    path.write_bytes(b"line\n" * 200_000)
    index = _lines.LineIndex(path.stat().st_size)
    with index.reading():
        _lines.finish_in_background(str(path), index)
        time.sleep(0.2)
        assert index.scanned == 0  # waits while a read holds the index
    assert index.background is not None
    index.background.join(timeout=30)
    assert index.complete and index.newlines == 200_000
