"""What a running tool can see: its session, the engine, the abort signal.

A :class:`Session` is one conversation's state (a chat session, or the
server's own session for ``codev/runTool``): what the model has read (for the
stale-read rule), what it changed, where its shell stands, which deferred tool
schemas it has loaded. A :class:`ToolUseContext` is handed to every stage of
one tool use.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.permissions.types import PermissionMode

if TYPE_CHECKING:
    from codev_ls.bridge import EditorBridge
    from codev_ls.engine.runtime import Engine
    from codev_ls.engine.tool import Tool


class AbortSignal:
    """An interruption flag usable from the event loop and from worker threads.

    ``abort()`` may be called from any thread. Tools running blocking work in
    threads poll :attr:`aborted`; async code awaits :meth:`wait`.
    """

    def __init__(self, parent: AbortSignal | None = None) -> None:
        self._flag = threading.Event()
        self.reason = ""
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        if parent is not None:
            parent.on_abort(lambda: self.abort(parent.reason))

    @property
    def aborted(self) -> bool:
        return self._flag.is_set()

    def abort(self, reason: str = "interrupted by the user") -> None:
        with self._lock:
            if self._flag.is_set():
                return
            self.reason = reason
            self._flag.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:  # a callback must never break the abort of the others
                pass

    def on_abort(self, cb: Callable[[], None]) -> None:
        """Call ``cb`` when aborted (at once if already aborted)."""
        with self._lock:
            if not self._flag.is_set():
                self._callbacks.append(cb)
                return
        cb()

    async def wait(self) -> None:
        if self.aborted:
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def _wake() -> None:
            loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(None))

        self.on_abort(_wake)
        await fut


@dataclass(slots=True)
class FileReadRecord:
    """What the model saw of a file when it read it (for the stale-read rule)."""

    path: Path
    mtime_ns: int
    size: int
    # sha256 of the content seen (buffer text or disk bytes); None for huge files.
    digest: str | None
    buffer_version: int | None = None
    # Whether the model saw the whole file or a window of it.
    partial: bool = False


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class FileChange:
    """One change made by a tool, kept so it can be reviewed and undone."""

    path: Path
    before: str | None  # None: the file was created
    after: str
    tool_name: str
    tool_use_id: str
    diff: str = ""


@dataclass
class Session:
    """One conversation's state."""

    root: Path
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    data_root: Path | None = None
    cwd: Path | None = None
    mode: PermissionMode | None = None  # None: the engine's mode
    read_state: dict[Path, FileReadRecord] = field(default_factory=dict)
    changes: list[FileChange] = field(default_factory=list)
    # Deferred tools whose full schema the model has been given (ToolSearch).
    discovered_tools: set[str] = field(default_factory=set)
    # Depth in the sub-agent tree (0: the user's own session).
    depth: int = 0
    # Free slots for features that keep per-session state (e.g. model history).
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        if self.cwd is None:
            self.cwd = self.root

    @property
    def data_dir(self) -> Path:
        """The session's data folder (persisted results, audit log), created on demand."""
        from codev_ls.engine.config import config_dir

        base = self.data_root or (config_dir() / "sessions")
        folder = base / self.id
        if self.extras.get("_data_dir_made") != folder:  # one mkdir per folder, not per use
            folder.mkdir(parents=True, exist_ok=True)
            self.extras["_data_dir_made"] = folder
        return folder


@dataclass
class ToolUseContext:
    """Everything one tool use can reach."""

    engine: Engine
    session: Session
    tool_use_id: str
    abort: AbortSignal = field(default_factory=AbortSignal)
    # The tool pool of this run (ToolSearch and Agent look here).
    tools: list[Tool] = field(default_factory=list)
    # Set by the permission stage when the editor's edit preview is the approval.
    edit_preview_approval: bool = False
    # Work a tool's stages share within this one use (Edit computes its plan once for
    # validation, the permission prompt and the call while the file is unchanged).
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def bridge(self) -> EditorBridge:
        return self.engine.bridge

    @property
    def root(self) -> Path:
        return self.session.root

    @property
    def mode(self) -> PermissionMode:
        return self.session.mode or self.engine.permission_context.mode

    def check_abort(self) -> None:
        """Raise :class:`ToolInterrupted` if the run was interrupted."""
        from codev_ls.engine.tool import ToolInterrupted

        if self.abort.aborted:
            raise ToolInterrupted(self.abort.reason)
