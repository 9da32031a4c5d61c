"""What the language server costs: idle memory, and an Edit of a 10 MB file over LSP.

- **idle RSS**: the server's resident memory once initialized, its engine built and
  one Read done, after a second of rest — against a bare pygls server
  (``lsp_latency.BARE_SERVER``) started and initialized the same way;
- **Edit of a 10 MB file open in the editor**: the time of ``codev/runTool`` Edit
  (one line changed in the middle) until its outcome, the editor applying the
  ``workspace/applyEdit`` it gets; against the floor any implementation pays
  — ``str.replace`` on the text and an atomic write of 10 MB to disk — measured
  in the same run;
- **what travels**: the size of that ``workspace/applyEdit`` message, against
  the size the same edit has when sent as a whole-document replacement (what a
  naive server sends). Only the changed range should travel.

    python bench/lsp_costs.py [--size-mb 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for folder in (str(REPO), str(BENCH)):
    if folder not in sys.path:
        sys.path.append(folder)

TARGET_RSS_MB = 150
TARGET_RSS_RATIO = 3.0
TARGET_EDIT_RATIO = 10.0
TARGET_MESSAGE = 0.01  # at most 1% of a whole-document replacement


class Client:
    """A blocking JSON-RPC client over a child's stdio that behaves like an editor."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._id = 0
        self.docs: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.apply_edit_sizes: list[int] = []

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def _read(self) -> tuple[dict[str, Any], int]:
        assert self.proc.stdout is not None
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line in (b"\r\n", b"\n"):
                break
        body = self.proc.stdout.read(length)
        return json.loads(body), len(body)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self._id += 1
        msg_id = self._id
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message, size = self._read()
            if "method" in message:
                if "id" in message:
                    result = self._server_request(message, size)
                    self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
                continue
            if message.get("id") == msg_id:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")

    def _server_request(self, message: dict[str, Any], size: int) -> Any:
        if message["method"] != "workspace/applyEdit":
            return None
        self.apply_edit_sizes.append(size)
        changes = message["params"]["edit"].get("changes") or {}
        for uri, edits in changes.items():
            text = apply_edits(self.docs[uri], edits)
            self.docs[uri] = text
            self.versions[uri] += 1
            self.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in
                                   sorted(edits, key=lambda e: _key(e), reverse=True)]})  # fmt: skip
        return {"applied": True}

    def initialize(self, root: Path, capabilities: dict[str, Any]) -> None:
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                    "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                                    "capabilities": capabilities})  # fmt: skip
        self.notify("initialized", {})

    def open(self, path: Path) -> None:
        uri = path.as_uri()
        self.docs[uri] = path.read_text()
        self.versions[uri] = 1
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "plaintext", "version": 1, "text": self.docs[uri]}})  # fmt: skip

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def _key(edit: dict[str, Any]) -> tuple[int, int]:
    start = edit["range"]["start"]
    return start["line"], start["character"]


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """LSP TextEdits (ASCII text here, so UTF-16 positions are character offsets)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(pos: dict[str, int]) -> int:
        return starts[min(pos["line"], len(starts) - 1)] + pos["character"]

    for edit in sorted(edits, key=_key, reverse=True):
        a, b = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:a] + edit["newText"] + text[b:]
    return text


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
    env["CODEV_CONFIG_DIR"] = str(tmp / "config")
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        env.pop(var, None)
    return env


def idle_rss(tmp: Path, rest: float = 1.0) -> tuple[float, float]:
    """(codev, bare) resident MiB, idle after initialize (and, for codev, one Read)."""
    import lsp_latency

    root = tmp / "idle"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    bare_script = tmp / "bare_server.py"
    bare_script.write_text(lsp_latency.BARE_SERVER)
    env = _env(tmp)
    caps = {"workspace": {"applyEdit": True}}
    out = []
    for argv in ([sys.executable, "-m", "codev_ls"], [sys.executable, str(bare_script)]):
        client = Client(argv, env)
        try:
            client.initialize(root, caps)
            if "codev_ls" in argv:
                outcome = client.request(
                    "codev/runTool", {"name": "Read", "input": {"file_path": str(root / "a.txt")}}
                )
                assert outcome["status"] == "success", outcome
            else:
                client.request("bench/echo", {})
            time.sleep(rest)
            out.append(client.rss_kib() / 1024)
        finally:
            client.close()
    return out[0], out[1]


def edit_big_file(tmp: Path, size_mb: int, repeat: int) -> dict[str, float]:
    root = tmp / "edit"
    root.mkdir()
    target = root / "big.txt"
    line = "x" * 60 + "\n"
    count = size_mb * 2**20 // (len(line) + 10)
    text = "".join(f"{i:09d} {line}" for i in range(count))
    target.write_text(text)
    env = _env(tmp)
    client = Client([sys.executable, "-m", "codev_ls"], env)
    times, floors = [], []
    try:
        client.initialize(root, {"workspace": {"applyEdit": True, "workspaceEdit": {}}})
        client.request("codev/permissionMode", {"mode": "acceptEdits"})
        client.open(target)
        read = client.request("codev/runTool", {"name": "Read", "input": {
            "file_path": str(target), "limit": 1}})  # fmt: skip
        assert read["status"] == "success", read
        for k in range(repeat):
            mid = count // 2 + k * 7
            old = f"{mid:09d} {line}"
            new = f"{mid:09d} EDITED {k}\n"
            start = time.perf_counter()
            outcome = client.request("codev/runTool", {"name": "Edit", "input": {
                "file_path": str(target), "old_string": old, "new_string": new}})  # fmt: skip
            times.append(time.perf_counter() - start)
            assert outcome["status"] == "success", outcome
            # The floor: the replacement and an atomic write of the whole file.
            current = client.docs[target.as_uri()]
            start = time.perf_counter()
            replaced = current.replace(new, old, 1)
            tmp_file = root / ".floor.tmp"
            with open(tmp_file, "w") as fh:
                fh.write(replaced)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_file, root / "floor.txt")
            floors.append(time.perf_counter() - start)
        final = target.read_text()
        assert f"EDITED {repeat - 1}" in final, "the edit is not on disk"
    finally:
        client.close()
    whole = len(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "workspace/applyEdit",
                            "params": {"label": "Codev: Edit big.txt", "edit": {"changes": {
                                target.as_uri(): [{"range": {"start": {"line": 0, "character": 0},
                                                             "end": {"line": count, "character": 0}},
                                                   "newText": final}]}}}}))  # fmt: skip
    return {
        "file_mb": len(text) / 2**20,
        "edit_s": statistics.median(times),
        "floor_s": statistics.median(floors),
        "message_bytes": statistics.median(client.apply_edit_sizes),
        "whole_bytes": whole,
    }


def lines(*, quick: bool, workdir: Path, line_type: Any) -> list[Any]:
    """Rows for ``python -m bench`` (``line_type`` is its ``Line``)."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp_name:
        tmp = Path(tmp_name)
        codev, bare = idle_rss(tmp, rest=0.5 if quick else 2.0)
        size = 2 if quick else 10
        e = edit_big_file(tmp, size, 2 if quick else 5)
    return [
        line_type("idle RSS after initialize and one Read", f"{codev:.1f} MiB",
                  f"{bare:.1f} MiB (bare pygls)", codev / bare,
                  f"< {TARGET_RSS_MB} MiB, ≤ {TARGET_RSS_RATIO:g}×",
                  codev < TARGET_RSS_MB and codev / bare <= TARGET_RSS_RATIO),
        line_type(f"Edit of a {e['file_mb']:.0f} MB file open in the editor, over LSP",
                  f"{e['edit_s'] * 1000:,.0f} ms",
                  f"{e['floor_s'] * 1000:,.0f} ms (replace + atomic write)",
                  e["edit_s"] / e["floor_s"], f"≤ {TARGET_EDIT_RATIO:g}×",
                  e["edit_s"] / e["floor_s"] <= TARGET_EDIT_RATIO),
        line_type("  its workspace/applyEdit message", f"{e['message_bytes']:,.0f} B",
                  f"{e['whole_bytes']:,} B (whole document)",
                  e["message_bytes"] / e["whole_bytes"], f"≤ {TARGET_MESSAGE:g}× (changed range only)",
                  e["message_bytes"] / e["whole_bytes"] <= TARGET_MESSAGE),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        codev, bare = idle_rss(tmp)
        print(
            f"idle RSS: codev-ls {codev:.1f} MiB, bare pygls {bare:.1f} MiB ({codev / bare:.2f}×)"
        )
        e = edit_big_file(tmp, args.size_mb, args.repeat)
    print(
        f"Edit of a {e['file_mb']:.0f} MB open file: {e['edit_s'] * 1000:.0f} ms "
        f"(floor {e['floor_s'] * 1000:.0f} ms, {e['edit_s'] / e['floor_s']:.1f}×); applyEdit "
        f"{e['message_bytes']:,.0f} B vs {e['whole_bytes']:,} B whole"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
