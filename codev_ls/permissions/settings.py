"""Settings files: user, project and local, merged; reloaded when they change.

    user     $CODEV_CONFIG_DIR/settings.json   (default ~/.codev/settings.json)
    project  <root>/.codev/settings.json
    local    <root>/.codev/settings.local.json  ("Always allow" answers are saved here)

Merged in that order: later files win for scalars (``permissions.defaultMode``),
lists are concatenated (rules, hooks), objects merged key by key. A malformed
file — not JSON, or a value of the wrong shape, or a rule that does not parse —
is reported to the user once (``show_message("error", ...)``) and ignored as a
whole; the others stay in force. :meth:`SettingsManager.refresh` is a cheap
``stat`` of the three files: the engine calls it before every decision, so an
edited file takes effect on the next tool use.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.engine.config import config_dir
from codev_ls.engine.files import atomic_write_text
from codev_ls.permissions.rules import (
    PermissionContext,
    PermissionRule,
    RuleSyntaxError,
    parse_rule,
    rule_warning,
)
from codev_ls.permissions.trust import (
    APPROVED,
    HELD_ORIGINS,
    REJECTED,
    Grant,
    grants_of,
    hash_list,
    held_settings,
    item_hash,
    load_user_key,
    trusted_folder,
)
from codev_ls.permissions.types import PermissionMode, parse_mode

if TYPE_CHECKING:
    from codev_ls.engine.runtime import Engine

log = logging.getLogger(__name__)

HOOK_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_HOOK_TIMEOUT = 60.0

# The keys Codev reads, per level: any other key is reported (a misspelt
# `permisions` or `defaultmode` would otherwise be a rule that silently does
# not apply). Keys other features read from the merged settings are listed here.
TOP_LEVEL_KEYS = (
    "$schema",
    "permissions",
    "hooks",
    "sandbox",
    "mcpServers",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "approvedProjectSettings",
    "rejectedProjectSettings",
    "trustedFolders",
)
PERMISSION_KEYS = ("allow", "ask", "deny", "defaultMode", "additionalDirectories")
MATCHER_KEYS = ("matcher", "hooks")
HOOK_KEYS = ("type", "command", "timeout")
SANDBOX_KEYS = ("enabled", "allowNetwork", "allowUnixSockets", "writePaths")

Reporter = Callable[[str, str], None]  # (level, message)


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One command hook: run with the workspace as cwd, JSON on stdin."""

    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    origin: str = ""


@dataclass(frozen=True, slots=True)
class HookMatcher:
    """Hooks that run for tools whose name matches ``matcher`` (a regex; ``*``/empty: all)."""

    matcher: str
    hooks: tuple[HookCommand, ...]
    origin: str = ""


@dataclass(slots=True)
class Settings:
    """The merged settings in force."""

    default_mode: PermissionMode | None = None
    allow: list[PermissionRule] = field(default_factory=list)
    ask: list[PermissionRule] = field(default_factory=list)
    deny: list[PermissionRule] = field(default_factory=list)
    additional_dirs: list[Path] = field(default_factory=list)
    hooks: dict[str, list[HookMatcher]] = field(default_factory=dict)
    # The merged JSON, for features with their own keys (mcpServers, env, ...).
    raw: dict[str, Any] = field(default_factory=dict)
    # Things the user should know about these settings (shown once).
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SettingsFile:
    origin: str  # "user" | "project" | "local"
    path: Path
    signature: tuple[int, int, int] | None = None
    data: dict[str, Any] | None = None
    parsed: Settings | None = None
    error: str | None = None
    reported: tuple[int, int, int] | None = None
    # What this file grants that is not approved (project and local files only).
    held: list[Grant] = field(default_factory=list)


# --------------------------------------------------------------------------- parsing


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def parse_settings(data: Any, origin: str, where: str, root: Path) -> Settings:
    """Check one file's JSON and turn it into :class:`Settings`; raises :class:`SettingsError`."""
    if not isinstance(data, dict):
        raise SettingsError(f"{where}: the top level must be a JSON object")
    out = Settings(raw=data)
    out.warnings.extend(unknown_keys(data, TOP_LEVEL_KEYS, where, ""))
    perms = data.get("permissions", {})
    if not isinstance(perms, dict):
        raise SettingsError(f"{where}: `permissions` must be an object")
    out.warnings.extend(unknown_keys(perms, PERMISSION_KEYS, where, "permissions."))
    sandbox = data.get("sandbox")
    if isinstance(sandbox, dict):
        out.warnings.extend(unknown_keys(sandbox, SANDBOX_KEYS, where, "sandbox."))
    mode = perms.get("defaultMode")
    if mode is not None:
        parsed_mode = parse_mode(mode)
        if parsed_mode is None:
            raise SettingsError(f"{where}: unknown permissions.defaultMode {mode!r}")
        if parsed_mode == "bypassPermissions" and origin != "user":
            # A repository must not switch every question off for whoever opens it.
            out.warnings.append(
                f"{where}: defaultMode bypassPermissions is ignored here; it can only be set in "
                "user settings or chosen in the editor"
            )
        else:
            out.default_mode = parsed_mode
    for kind in ("allow", "ask", "deny"):
        rules = perms.get(kind, [])
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise SettingsError(f"{where}: permissions.{kind} must be a list of strings")
        for text in rules:
            try:
                getattr(out, kind).append(parse_rule(text, origin=origin))
            except RuleSyntaxError as exc:
                raise SettingsError(f"{where}: permissions.{kind}: {exc}") from exc
    dirs = perms.get("additionalDirectories", [])
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise SettingsError(f"{where}: permissions.additionalDirectories must be a list of strings")
    out.additional_dirs = [
        Path(os.path.expanduser(d)) if os.path.isabs(os.path.expanduser(d)) else root / d
        for d in dirs
    ]
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{where}: `hooks` must be an object")
    out.warnings.extend(unknown_keys(hooks, HOOK_EVENTS, where, "hooks.", what="hook event"))
    for event, matchers in hooks.items():
        if not isinstance(matchers, list):
            raise SettingsError(f"{where}: hooks.{event} must be a list")
        parsed = [
            _parse_matcher(m, f"{where}: hooks.{event}[{i}]", origin, out.warnings)
            for i, m in enumerate(matchers)
        ]
        out.hooks[event] = parsed
    return out


def unknown_keys(
    data: dict[str, Any], known: Iterable[str], where: str, prefix: str, *, what: str = "key"
) -> list[str]:
    """Warnings for the keys of ``data`` Codev does not read, with the likely meant one."""
    import difflib

    known = tuple(known)
    folded = {k.casefold(): k for k in known}
    out = []
    for key in data:
        if not isinstance(key, str) or key in known:
            continue
        guess = folded.get(key.casefold()) or next(
            iter(difflib.get_close_matches(key, known, n=1, cutoff=0.75)), None
        )
        if guess:
            hint = f"did you mean `{prefix}{guess}`?"
        else:
            hint = "Codev reads " + ", ".join(f"`{prefix}{k}`" for k in known if k[:1] != "$")
        out.append(f"{where}: unknown {what} `{prefix}{key}` is ignored; {hint}")
    return out


def _parse_matcher(
    entry: Any, where: str, origin: str, warnings: list[str] | None = None
) -> HookMatcher:
    import re

    if not isinstance(entry, dict):
        raise SettingsError(f"{where} must be an object with `matcher` and `hooks`")
    if warnings is not None:
        warnings.extend(unknown_keys(entry, MATCHER_KEYS, where, ""))
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        raise SettingsError(f"{where}.matcher must be a string")
    if matcher not in ("", "*"):
        try:
            re.compile(matcher)
        except re.error as exc:
            raise SettingsError(f"{where}.matcher {matcher!r} is not a valid regex: {exc}") from exc
    hooks = entry.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        raise SettingsError(f"{where}.hooks must be a non-empty list")
    commands = []
    for j, hook in enumerate(hooks):
        if not isinstance(hook, dict):
            raise SettingsError(f"{where}.hooks[{j}] must be an object")
        if warnings is not None:
            warnings.extend(unknown_keys(hook, HOOK_KEYS, f"{where}.hooks[{j}]", ""))
        if hook.get("type", "command") != "command":
            raise SettingsError(f'{where}.hooks[{j}]: only `type: "command"` hooks are supported')
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            raise SettingsError(f"{where}.hooks[{j}].command must be a non-empty string")
        timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise SettingsError(f"{where}.hooks[{j}].timeout must be a positive number (seconds)")
        commands.append(HookCommand(command, float(timeout), origin))
    return HookMatcher(matcher, tuple(commands), origin)


def merge_raw(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Later wins for scalars, lists are concatenated, objects merged key by key."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            out[key] = merge_raw(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            out[key] = [*old, *value]
        else:
            out[key] = value
    return out


def merge(parts: Iterable[Settings]) -> Settings:
    out = Settings()
    for part in parts:
        if part.default_mode is not None:
            out.default_mode = part.default_mode
        out.allow.extend(part.allow)
        out.ask.extend(part.ask)
        out.deny.extend(part.deny)
        out.additional_dirs.extend(part.additional_dirs)
        out.warnings.extend(part.warnings)
        for event, matchers in part.hooks.items():
            out.hooks.setdefault(event, []).extend(matchers)
        out.raw = merge_raw(out.raw, part.raw)
    return out


# --------------------------------------------------------------------------- the manager


class SettingsManager:
    """Loads, merges and watches the three settings files of one workspace."""

    def __init__(
        self,
        root: Path | str,
        *,
        report: Reporter | None = None,
        user_dir: Path | None = None,
        known_tools: Callable[[], frozenset[str]] | None = None,
    ) -> None:
        self.root = Path(root)
        self.report: Reporter = report or (lambda level, msg: log.warning("%s", msg))
        user = (user_dir or config_dir()) / "settings.json"
        self.files = [
            SettingsFile("user", user),
            SettingsFile("project", self.root / ".codev" / "settings.json"),
            SettingsFile("local", self.root / ".codev" / "settings.local.json"),
        ]
        self.settings = Settings()
        self._contexts: list[PermissionContext] = []
        self._warned: set[str] = set()
        self._applied_mode: PermissionMode | None = None
        # The tool names rules may name; asked for at the first refresh after start-up
        # (the tools are built by then: asking at start-up would slow the server down).
        self._known_tools = known_tools
        self._tool_names: frozenset[str] | None = None
        # Approval of the workspace files' grants (trust.py): approved for this run,
        # already asked about in this run, and a lock so one question is asked at a time.
        self.session_approved: set[str] = set()
        self.asked: set[str] = set()
        self.approval_lock = asyncio.Lock()
        self._held_reported: set[str] = set()
        self.refresh()

    @property
    def local_path(self) -> Path:
        return self.files[2].path

    def refresh(self) -> bool:
        """Re-read the files whose mtime/size changed; True when the merged settings changed."""
        if self._tool_names is None and self._known_tools is not None and self._contexts:
            try:
                self._tool_names = self._known_tools()
            except Exception:  # no names to check against: no name warnings
                log.exception("listing the tools for settings warnings failed")
                self._tool_names = frozenset()
            self._warn_rules()
        changed = False
        for f in self.files:
            sig = _signature(f.path)
            if sig == f.signature:
                continue
            f.signature = sig
            self._load(f)
            changed = True
        if changed:
            self.settings = merge(self._in_force())
            self._warn_rules()
            for pctx in self._contexts:
                self._apply(pctx)
        return changed

    def _in_force(self) -> list[Settings]:
        """Each file's settings as far as they are in force: the workspace files'
        grants only once approved (trust.py)."""
        user, _project, local = self.files
        trusted = trusted_folder(self.root, user.data)
        approved = hash_list(local.data, APPROVED)
        key: bytes | None = None
        out: list[Settings] = []
        for f in self.files:
            f.held = []
            if f.parsed is None:
                continue
            if f.origin not in HELD_ORIGINS or trusted is not None:
                out.append(f.parsed)
                continue
            grants = grants_of(f.data, f.origin)
            if grants and key is None:
                key = load_user_key(create=False) or b""
            f.held = [
                g
                for g in grants
                if g.canonical not in self.session_approved
                and not (key and item_hash(key, self.root, g) in approved)
            ]
            out.append(held_settings(f.parsed, f.held, self.root))
        self._report_held()
        return out

    def _report_held(self) -> None:
        held = self.held_grants()
        new = [g for g in held if g.canonical not in self._held_reported]
        if not new:
            return
        self._held_reported.update(g.canonical for g in new)
        shown = "; ".join(g.text for g in new[:5]) + (" ..." if len(new) > 5 else "")
        self.report(
            "warning",
            f"Codev settings: this workspace's settings files grant what you have not approved "
            f"({shown}). They are not in force until you do: you are asked at the next tool use.",
        )

    def held_grants(self) -> list[Grant]:
        """What the workspace's settings files grant that is not in force (not approved)."""
        return [g for f in self.files for g in f.held]

    def pending_grants(self) -> list[Grant]:
        """Held grants to ask about now: not rejected before, not asked in this run."""
        rejected = hash_list(self.files[2].data, REJECTED)
        key = load_user_key(create=False) if rejected else None
        return [
            g
            for g in self.held_grants()
            if g.canonical not in self.asked
            and not (key and item_hash(key, self.root, g) in rejected)
        ]

    def approve(self, grants: list[Grant], *, save: bool) -> str | None:
        """Put ``grants`` in force: for this run, and with ``save`` for good (the error, or None)."""
        self.session_approved.update(g.canonical for g in grants)
        error = None
        if save:
            error = self._save_hashes(grants, APPROVED, drop_from=REJECTED)
        self._reapply()
        return error

    def reject(self, grants: list[Grant]) -> str | None:
        """Remember that the user rejected ``grants`` (asked again when they change)."""
        return self._save_hashes(grants, REJECTED, drop_from=APPROVED)

    def _save_hashes(self, grants: list[Grant], name: str, *, drop_from: str) -> str | None:
        key = load_user_key(create=True)
        if key is None:
            return (
                "the answer about this workspace's settings could not be saved (the approval "
                "key in your config folder cannot be made or read); it holds for this run only"
            )
        hashes = [item_hash(key, self.root, g) for g in grants]

        def change(data: dict[str, Any]) -> str | None:
            listed = data.setdefault(name, [])
            if not isinstance(listed, list):
                return f"{self.local_path}: {name} is not a list, so the answer was not saved"
            listed.extend(h for h in hashes if h not in listed)
            other = data.get(drop_from)
            if isinstance(other, list):
                other[:] = [h for h in other if h not in hashes]
            return None

        return self.update_local(change, what="your answer about these settings")

    def _reapply(self) -> None:
        self.settings = merge(self._in_force())
        for pctx in self._contexts:
            self._apply(pctx)

    def _load(self, f: SettingsFile) -> None:
        f.data, f.parsed, f.error = None, None, None
        if f.signature is None:
            return
        where = str(f.path)
        try:
            text = f.path.read_text(encoding="utf-8")
            data = json.loads(text) if text.strip() else {}
            f.parsed = parse_settings(data, f.origin, where, self.root)
            f.data = data
        except json.JSONDecodeError as exc:
            f.error = (
                f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            )
        except (OSError, UnicodeDecodeError) as exc:
            f.error = f"{where} cannot be read ({exc})"
        except SettingsError as exc:
            f.error = str(exc)
        if f.error is not None and f.reported != f.signature:
            f.reported = f.signature
            self.report(
                "error", f"Codev settings: {f.error}. This file is ignored until it is fixed."
            )

    def _warn_rules(self) -> None:
        s = self.settings
        for warning in s.warnings:
            if warning not in self._warned:
                self._warned.add(warning)
                self.report("warning", f"Codev settings: {warning}.")
        for kind, rules in (("allow", s.allow), ("ask", s.ask), ("deny", s.deny)):
            for rule in rules:
                warning = rule_warning(rule, kind, self._tool_names or frozenset())  # type: ignore[arg-type]
                if warning and warning not in self._warned:
                    self._warned.add(warning)
                    self.report("warning", f"Codev settings: {warning}.")

    # ---------------------------------------------------------------- wiring

    def attach(self, pctx: PermissionContext, *, set_mode: bool) -> None:
        """Keep ``pctx``'s rules (and, when ``set_mode``, its mode) in step with the files."""
        self._contexts.append(pctx)
        pctx.reload = self.refresh
        if set_mode:
            self._applied_mode = pctx.mode
        self._apply(pctx)

    def _apply(self, pctx: PermissionContext) -> None:
        s = self.settings
        pctx.allow = list(s.allow)
        pctx.ask = list(s.ask)
        pctx.deny = list(s.deny)
        pctx.additional_dirs = list(s.additional_dirs)
        # The settings' defaultMode follows the file unless someone chose another mode.
        if self._applied_mode is not None and pctx.mode == self._applied_mode:
            if s.default_mode is not None and s.default_mode != pctx.mode:
                pctx.mode = s.default_mode
            self._applied_mode = pctx.mode

    def hooks_for(self, event: str) -> list[HookMatcher]:
        self.refresh()
        return list(self.settings.hooks.get(event, []))

    # ---------------------------------------------------------------- "Always allow"

    def add_allow_rules(self, rules: list[str]) -> str | None:
        """Append rules to settings.local.json atomically; the error message, or None."""

        def add(data: dict[str, Any]) -> str | None:
            perms = data.setdefault("permissions", {})
            if not isinstance(perms, dict):
                return f"{self.local_path} has an unexpected shape, so the rule was not saved"
            allow = perms.setdefault("allow", [])
            if not isinstance(allow, list):
                return (
                    f"{self.local_path}: permissions.allow is not a list, so the rule was not saved"
                )
            for rule in rules:
                if rule not in allow:
                    allow.append(rule)
            # The user chose these rules: they are saved approved (trust.py).
            key = load_user_key(create=True)
            if key is not None:
                approved = data.setdefault(APPROVED, [])
                if isinstance(approved, list):
                    for grant in grants_of({"permissions": {"allow": rules}}, "local"):
                        digest = item_hash(key, self.root, grant)
                        if digest not in approved:
                            approved.append(digest)
            return None

        self.session_approved.update(
            g.canonical for g in grants_of({"permissions": {"allow": rules}}, "local")
        )
        return self.update_local(add, what="the rule", kept="kept for this session only")

    def update_local(
        self,
        change: Callable[[dict[str, Any]], str | None],
        *,
        what: str = "the setting",
        kept: str = "not saved",
    ) -> str | None:
        """Change settings.local.json atomically under a lock; the error message, or None.

        ``change`` edits the file's JSON object in place and returns an error
        message to leave the file untouched. A file that is not valid JSON is
        never overwritten (the user's other settings in it would be lost).
        """
        error = update_settings_file(self.local_path, change, what=what, kept=kept)
        if error is None:
            self.refresh()
        return error


def update_settings_file(
    path: Path,
    change: Callable[[dict[str, Any]], str | None],
    *,
    what: str = "the setting",
    kept: str = "not saved",
) -> str | None:
    """Read ``path`` (a settings file), let ``change`` edit it, write it back atomically.

    Two servers saving at once do not lose each other's change (an exclusive
    lock beside the file). Returns the error message for the user, or None.
    """
    try:
        with _locked(path):
            data: dict[str, Any] = {}
            if path.exists():
                text = path.read_text(encoding="utf-8")
                try:
                    data = json.loads(text) if text.strip() else {}
                except json.JSONDecodeError:
                    return (
                        f"{path} is not valid JSON, so {what} was {kept} (fix the file to save it)"
                    )
                if not isinstance(data, dict):
                    return f"{path} has an unexpected shape, so {what} was not saved"
            error = change(data)
            if error is not None:
                return error
            atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        return f"could not save {what} to {path}: {exc}"
    return None


@contextlib.contextmanager
def _locked(path: Path):  # type: ignore[no-untyped-def]
    """An exclusive lock beside ``path`` so two servers saving rules do not lose one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX
            pass
        yield
    finally:
        os.close(fd)


def save_always_allow(engine: Engine, rules: list[str]) -> str | None:
    """Persist "Always allow" rules for ``engine``'s workspace; the error message, or None."""
    manager = engine.services.get("settings")
    if not isinstance(manager, SettingsManager):
        manager = SettingsManager(engine.root, report=engine.bridge.show_message)
    return manager.add_allow_rules(rules)
