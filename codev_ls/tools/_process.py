"""Shell processes in their own process group, with their output streamed to bounded memory.

Shared by Bash (foreground commands) and the background task manager.

Why it looks like this:

- **One pipe for stdout and stderr**, so the merged output keeps the order in
  which the command wrote it (two pipes lose it).
- **Memory stays flat** however much a command prints: a reader thread moves
  the pipe's bytes to a file (:class:`OutputSink`) and keeps only the first
  bytes (the inline result) and a ring of the last bytes (previews, progress).
- **The whole process group is killed**: the command starts a new session
  (``start_new_session``), so its children share its process group; timeouts,
  interruptions and stops signal the group (SIGTERM, then SIGKILL after a
  grace period). Processes the command left behind (``cmd &``) are stopped
  when it ends, the way the sandbox's PID namespace stops them anyway.
- **No signal ever reaches a stranger**: the group leader is waited for with
  ``WNOWAIT`` and reaped only after the last signal is sent, so its PID (the
  group's id) cannot be reused while we may still signal it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

# Bytes read from the pipe at a time, and the pipe's buffer size (where Linux allows it).
READ_CHUNK = 1024 * 1024
PIPE_BUFFER_BYTES = 1024 * 1024
# SIGTERM first; SIGKILL the group when it is still there after this long.
DEFAULT_GRACE_SECONDS = 2.0
# After the command ended and its group was stopped, wait this long for the pipe to close.
DRAIN_SECONDS = 2.0


class OutputSink:
    """Receives a command's output bytes; keeps bounded memory, spills the rest to a file.

    The first ``keep_bytes`` stay in memory (a short output is returned inline
    without touching the disk); once the output grows past them, everything is
    written to ``spill_path`` (created then) and memory holds only that head
    and a ring of the last ``tail_bytes``. With ``always_file`` the file is
    written from the first byte (background tasks are read from it).

    ``write`` is called from the reader thread; readers take ``lock``.
    """

    def __init__(
        self,
        spill_path: Path,
        *,
        keep_bytes: int = 120_000,
        tail_bytes: int = 64 * 1024,
        always_file: bool = False,
    ) -> None:
        self.spill_path = Path(spill_path)
        self.keep_bytes = keep_bytes
        self.tail_bytes = tail_bytes
        self.lock = threading.Lock()
        self.head = bytearray()
        self.tail = bytearray()
        self.total_bytes = 0
        self.total_lines = 0
        self.last_write = time.monotonic()
        self.error: OSError | None = None
        self._fd: int | None = None
        # The file was created (it holds the whole output unless ``error`` is set).
        self.file_written = False
        if always_file:
            self._open_file()

    @property
    def spilled(self) -> bool:
        """Not everything stayed in memory: the output is (or should have been) in the file."""
        return self.file_written or self.error is not None

    def _open_file(self) -> None:
        self.spill_path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.spill_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.file_written = True
        if self.head:
            self._write_all(bytes(self.head))

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    def write(self, chunk: bytes) -> None:
        with self.lock:
            self.total_bytes += len(chunk)
            self.total_lines += chunk.count(b"\n")
            self.last_write = time.monotonic()
            room = self.keep_bytes - len(self.head)
            if room > 0:
                self.head += chunk[:room]
            self.tail += chunk[-self.tail_bytes :]
            excess = len(self.tail) - self.tail_bytes
            if excess > 0:
                del self.tail[:excess]
            if self.error is not None:
                return
            try:
                if not self.file_written and self.total_bytes > self.keep_bytes:
                    # The head holds the first keep_bytes; write them, then the rest of this chunk.
                    self._open_file()
                    self._write_all(chunk[max(0, room) :])
                elif self._fd is not None:
                    self._write_all(chunk)
            except OSError as exc:  # a full disk must not kill the command or the server
                self.error = exc

    def complete(self) -> bool:
        """True when every byte is in memory (nothing was cut)."""
        return self.total_bytes <= len(self.head)

    def write_file_from_memory(self) -> None:
        """Persist an output that stayed in memory (it turned out too long to show inline)."""
        with self.lock:
            if not self.file_written and self.error is None:
                try:
                    self._open_file()
                except OSError as exc:
                    self.error = exc
                finally:
                    if self._fd is not None:
                        with contextlib.suppress(OSError):
                            os.close(self._fd)
                        self._fd = None

    def tail_text(self, max_lines: int = 5, max_chars: int = 200) -> list[str]:
        """The last complete-ish lines of output, for progress reports."""
        with self.lock:
            data = bytes(self.tail[-8192:])
        text = data.decode("utf-8", errors="replace").replace("\r", "\n")
        lines = [ln.rstrip() for ln in text.split("\n")]
        lines = [ln for ln in lines if ln.strip()]
        return [ln[:max_chars] for ln in lines[-max_lines:]]

    def close(self) -> None:
        with self.lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None


# --------------------------------------------------------------------------- process groups


def group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) processes in group ``pgid``; None where /proc cannot tell."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    members = []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        rest = stat[stat.rfind(b")") + 2 :].split()
        if len(rest) >= 3 and int(rest[2]) == pgid and rest[0] not in (b"Z", b"X"):
            members.append(int(name))
    return members


class GroupProcess:
    """A command started in a new session, its output in an :class:`OutputSink`.

    ``await done()`` resolves with the exit code once the command ended, its
    group was stopped and the pipe drained. :meth:`kill` stops the group
    (SIGTERM, then SIGKILL) and is safe to call at any time, from any task.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str,
        env: Mapping[str, str] | None,
        sink: OutputSink,
        grace_seconds: float | None = None,
        pass_fds: Sequence[int] = (),
    ) -> None:
        self.argv = list(argv)
        # Descriptors the command gets (the sandbox's seccomp filter); the caller owns them.
        self.pass_fds = tuple(pass_fds)
        self.cwd = str(cwd)
        self.env = dict(env) if env is not None else None
        self.sink = sink
        self.grace_seconds = DEFAULT_GRACE_SECONDS if grace_seconds is None else grace_seconds
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self.started_at = 0.0
        self.ended_at: float | None = None
        self.returncode: int | None = None
        self.killed = False
        self._lock = threading.Lock()  # guards signalling against reaping
        self._reaped = False
        self._leader_exited = threading.Event()
        self._reader_done = threading.Event()
        self._stop_reading = threading.Event()
        self._future: asyncio.Future[int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending = 2  # the reader and the waiter

    # ---------------------------------------------------------------- start

    def start(self) -> None:
        """Spawn the command. Call from the event loop's thread (see below)."""
        # Spawned on the loop's thread on purpose: bwrap's --die-with-parent is tied to the
        # thread that forked it, and a worker thread of asyncio.to_thread may go away.
        self._loop = asyncio.get_running_loop()
        self._future = self._loop.create_future()
        read_fd, write_fd = os.pipe()
        _grow_pipe(write_fd)
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                close_fds=True,
                pass_fds=self.pass_fds,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self.pid = self.proc.pid
        self.started_at = time.monotonic()
        threading.Thread(
            target=self._read, args=(read_fd,), name=f"codev-out-{self.pid}", daemon=True
        ).start()
        threading.Thread(target=self._wait, name=f"codev-wait-{self.pid}", daemon=True).start()

    # ---------------------------------------------------------------- threads

    def _read(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        try:
            while True:
                if self._stop_reading.is_set():
                    break
                if not poller.poll(100):
                    continue
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self.sink.write(chunk)
        finally:
            os.close(fd)
            self._reader_done.set()
            self._finish_part()

    def _wait(self) -> None:
        assert self.proc is not None
        waitid = getattr(os, "waitid", None)
        try:
            if waitid is not None:
                waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
            else:  # no waitid: reap at once (a reused PID is then possible, if unlikely)
                self.proc.wait()
        except ChildProcessError:
            pass
        self._leader_exited.set()
        # Stop whatever the command left running in its group (`cmd &`), then reap.
        members = [p for p in (group_members(self.pid) or []) if p != self.pid]
        if members:
            self._terminate_group()
        # Give the pipe a moment to close (a process outside the group may still hold it).
        if not self._reader_done.wait(DRAIN_SECONDS):
            self._stop_reading.set()
        with self._lock:
            self.returncode = self.proc.wait()
            self._reaped = True
        self.ended_at = time.monotonic()
        self._finish_part()

    def _finish_part(self) -> None:
        with self._lock:
            self._pending -= 1
            last = self._pending == 0
        if last and self._loop is not None and self._future is not None:
            fut = self._future
            code = self.returncode if self.returncode is not None else -1
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                self._loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(code))

    # ---------------------------------------------------------------- signals

    def _signal_group(self, sig: int) -> bool:
        with self._lock:
            if self._reaped or self.pid <= 0:  # never killpg(0): that is our own group
                return False
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                return False
            except PermissionError:
                return False
            return True

    def _group_alive(self) -> bool:
        members = group_members(self.pid)
        if members is None:  # no /proc: judge by the leader alone
            return not self._leader_exited.is_set()
        return bool(members)

    def _terminate_group(self) -> None:
        """SIGTERM the group, SIGKILL it if anything survives the grace period. Blocking."""
        if not self._signal_group(signal.SIGTERM):
            return
        deadline = time.monotonic() + self.grace_seconds
        while time.monotonic() < deadline:
            if not self._group_alive():
                return
            time.sleep(0.02)
        self._signal_group(signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and self._group_alive():
            time.sleep(0.02)

    # ---------------------------------------------------------------- async API

    @property
    def running(self) -> bool:
        return self._future is not None and not self._future.done()

    async def done(self) -> int:
        assert self._future is not None, "start() first"
        return await asyncio.shield(self._future)

    async def kill(self) -> int:
        """Stop the whole group and wait until it is gone and reaped; the exit code."""
        if self._future is None:
            return -1
        if not self._future.done():
            self.killed = True
            await asyncio.to_thread(self._terminate_group)
        return await self.done()

    def kill_now(self) -> None:
        """SIGKILL the group without waiting (last resort at interpreter exit)."""
        self.killed = True
        self._signal_group(signal.SIGKILL)


def _grow_pipe(fd: int) -> None:
    """A 1 MiB pipe buffer: a chatty command wakes the reader 16× less often."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BUFFER_BYTES)
    except (ImportError, OSError):
        pass  # the default (64 KiB) works, only slower


def describe_exit(code: int) -> str:
    """``exit code 2`` / ``killed by SIGTERM``."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit code {code}"
