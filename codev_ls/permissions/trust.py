"""Approval of what a workspace's own settings files grant: hooks and allow rules.

``<root>/.codev/settings.json`` is checked in with the repository, and a
repository can ship ``.codev/settings.local.json`` too (it is normally
gitignored, but nothing stops a commit, an archive or a fork from carrying
it). Both can *grant*: a hook is a command that runs with the user's rights on
the first tool use, unsandboxed; ``allow: ["Bash"]`` turns every question
off. Opening a repository must not do either behind the user's back, so —
as for a project's MCP servers (:mod:`codev_ls.mcp.approval`) — what those
two files grant is held until the user approves it:

- hooks (each command, with its event and matcher);
- ``permissions.allow`` rules;
- ``permissions.additionalDirectories`` (more folders where reads, and in
  acceptEdits edits, need no question);
- ``permissions.defaultMode`` ``acceptEdits`` or ``auto`` (``bypassPermissions``
  is never taken from these files);
- ``sandbox.enabled: false``, ``sandbox.allowNetwork: true``,
  ``sandbox.allowUnixSockets: true`` and ``sandbox.writePaths``.

What only restricts — deny and ask rules, ``plan``/``default`` modes — is in
force at once. The user's own settings (``$CODEV_CONFIG_DIR/settings.json``)
are trusted as they are.

The user is asked once, at the first tool use after the settings load (the
question lists each held item); "Always allow" saves, in settings.local.json,
``approvedProjectSettings``: one HMAC-SHA256 per item, of the item, the
workspace folder and a version tag, under the user's approval key (the one
MCP approvals use, in the user's config folder), cut to 16 hex digits. So an
approval is bound to that exact hook command or rule in that workspace, for
that user; a repository cannot ship one (it has no key), a changed hook is
asked about again, and an approval copied elsewhere counts for nothing.
"Allow once" approves for as long as the server runs; "Reject" saves the
items' hashes in ``rejectedProjectSettings`` (not asked again until they
change); a dismissed question remembers nothing.

Rules Codev itself writes to settings.local.json ("Always allow" answers) are
saved already approved: the user chose them. A folder can be trusted as a
whole — every grant of its settings files in force without asking — by
listing it (or a parent) in ``trustedFolders`` in the user settings, or in
``CODEV_TRUSTED_FOLDERS`` (paths separated by ``:``), for CI and tests.
Neither ``--yes`` nor bypassPermissions approves: they answer tool uses.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codev_ls.bridge import PermissionRequest
from codev_ls.permissions.types import parse_mode

if TYPE_CHECKING:
    from codev_ls.engine.context import ToolUseContext
    from codev_ls.permissions.settings import Settings, SettingsManager

log = logging.getLogger(__name__)

APPROVED = "approvedProjectSettings"
REJECTED = "rejectedProjectSettings"
TRUSTED_FOLDERS = "trustedFolders"
TRUST_ENV = "CODEV_TRUSTED_FOLDERS"
HASH_CHARS = 16
# The origins whose grants need approval (files inside the workspace).
HELD_ORIGINS = ("project", "local")


@dataclass(frozen=True, slots=True)
class Grant:
    """One thing a settings file grants: shown to the user, hashed for the approval."""

    origin: str
    kind: str  # "hook" | "allow" | "directory" | "mode" | "sandbox"
    text: str  # as shown in the question
    canonical: str  # what the approval is bound to


def grants_of(data: Any, origin: str) -> list[Grant]:
    """What a settings file's JSON grants (only well-formed entries; the parser
    reports the rest)."""
    if not isinstance(data, dict):
        return []
    out: list[Grant] = []

    def add(kind: str, text: str, value: Any) -> None:
        canonical = json.dumps([kind, value], sort_keys=True, separators=(",", ":"))
        out.append(Grant(origin, kind, text, canonical))

    perms = data.get("permissions")
    if isinstance(perms, dict):
        for rule in perms.get("allow") or []:
            if isinstance(rule, str):
                add("allow", f"allow rule {rule}", rule)
        for folder in perms.get("additionalDirectories") or []:
            if isinstance(folder, str):
                add("directory", f"additional folder {folder}", folder)
        # As parse_mode reads it (any case, spaces around): "acceptedits" is acceptEdits.
        mode = parse_mode(perms.get("defaultMode"))
        if mode in ("acceptEdits", "auto"):
            add("mode", f"default mode {mode}", mode)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event, matchers in hooks.items():
            for entry in matchers if isinstance(matchers, list) else []:
                if not isinstance(entry, dict):
                    continue
                matcher = entry.get("matcher", "")
                for hook in entry.get("hooks") or []:
                    if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                        shown = f"{event} hook ({matcher or '*'}): {hook['command']}"
                        add("hook", shown, [event, matcher, hook["command"], hook.get("timeout")])
    sandbox = data.get("sandbox")
    if isinstance(sandbox, dict):
        if sandbox.get("enabled") is False:
            add("sandbox", "sandbox turned off", "enabled=false")
        if sandbox.get("allowNetwork") is True:
            add("sandbox", "network allowed in the sandbox", "allowNetwork=true")
        if sandbox.get("allowUnixSockets") is True:
            add("sandbox", "host Unix sockets reachable from the sandbox", "allowUnixSockets=true")
        for folder in sandbox.get("writePaths") or []:
            if isinstance(folder, str):
                add("sandbox", f"sandbox may write {folder}", ["writePaths", folder])
    return out


def item_hash(key: bytes, root: Path, grant: Grant) -> str:
    """The approval hash of one grant in one workspace, under the user's key."""
    message = "\0".join(["codev-settings-approval/1", str(root), grant.canonical]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:HASH_CHARS]


def hash_list(data: Any, name: str) -> set[str]:
    """The hashes listed under ``name`` in a settings file's JSON."""
    value = data.get(name) if isinstance(data, dict) else None
    if not isinstance(value, list):
        return set()
    return {v for v in value if isinstance(v, str)}


def trusted_folder(root: Path, user_data: Any) -> Path | None:
    """The trusted folder (``trustedFolders`` in user settings, or ``$CODEV_TRUSTED_FOLDERS``)
    that holds ``root``, if any."""
    listed: list[str] = []
    env = os.environ.get(TRUST_ENV, "")
    listed += [p for p in env.split(os.pathsep) if p.strip()]
    folders = user_data.get(TRUSTED_FOLDERS) if isinstance(user_data, dict) else None
    if isinstance(folders, list):
        listed += [f for f in folders if isinstance(f, str) and f.strip()]
    real_root = Path(os.path.realpath(root))
    for item in listed:
        folder = Path(os.path.realpath(os.path.expanduser(item)))
        if real_root == folder or folder in real_root.parents:
            return folder
    return None


def held_settings(parsed: Settings, held: Iterable[Grant], root: Path) -> Settings:
    """``parsed`` without the held grants (hooks, allow rules, folders, mode)."""
    from codev_ls.permissions.settings import HookMatcher, Settings

    held = list(held)
    if not held:
        return parsed
    # Compared as parsed rules, as they are in force: `Bash(*)`, `Bash ` and `Bash` are one
    # rule, `Bash( touch:* )` is `Bash(touch:*)`.
    allow = {_rule_text(json.loads(g.canonical)[1]) for g in held if g.kind == "allow"}
    folders = {_folder(json.loads(g.canonical)[1], root) for g in held if g.kind == "directory"}
    hooks = {tuple(json.loads(g.canonical)[1][:3]) for g in held if g.kind == "hook"}
    mode_held = any(g.kind == "mode" for g in held)
    out = Settings(
        default_mode=None if mode_held else parsed.default_mode,
        allow=[r for r in parsed.allow if r.text not in allow],
        ask=list(parsed.ask),
        deny=list(parsed.deny),
        additional_dirs=[d for d in parsed.additional_dirs if d not in folders],
        raw=parsed.raw,
        warnings=list(parsed.warnings),
    )
    for event, matchers in parsed.hooks.items():
        kept = []
        for m in matchers:
            commands = tuple(h for h in m.hooks if (event, m.matcher, h.command) not in hooks)
            if commands:
                kept.append(HookMatcher(m.matcher, commands, m.origin))
        out.hooks[event] = kept
    return out


def _rule_text(text: str) -> str:
    """A rule as written, in the form the parsed rule has (its ``text``)."""
    from codev_ls.permissions.rules import RuleSyntaxError, parse_rule

    try:
        return parse_rule(text).text
    except RuleSyntaxError:
        return text


def _folder(text: str, root: Path) -> Path:
    """As parse_settings turns an additionalDirectories entry into a path."""
    expanded = os.path.expanduser(text)
    return Path(expanded) if os.path.isabs(expanded) else root / text


def load_user_key(*, create: bool) -> bytes | None:
    from codev_ls.mcp.approval import load_key

    return load_key(create=create)


# --------------------------------------------------------------------------- asking


def approval_request(manager: SettingsManager, grants: list[Grant]) -> PermissionRequest:
    files = sorted({_file_label(g.origin) for g in grants})
    lines = [f"{_file_label(g.origin)}: {g.text}" for g in grants]
    return PermissionRequest(
        tool_use_id="project-settings",
        tool_name="settings",
        message=f"Apply what this workspace's settings grant ({', '.join(files)})?",
        headline=(
            f"This workspace's settings ({', '.join(files)}) want to run hooks or let tools "
            "run without asking."
        ),
        detail="\n".join(lines),
        reason=(
            "these files can come with the repository; hooks run commands with your rights "
            "and allow rules skip questions. Until you approve, they are not in force (deny "
            "and ask rules are)"
        ),
        always_rule="these settings (as written now)",
        kind="project_settings",
    )


def _file_label(origin: str) -> str:
    return ".codev/settings.json" if origin == "project" else ".codev/settings.local.json"


async def ask_about_held_settings(ctx: ToolUseContext) -> None:
    """Before a tool use's hooks and decision: ask, once per server run, about the
    grants of the workspace's settings files that are not approved yet."""
    from codev_ls.permissions.settings import SettingsManager

    manager = ctx.engine.services.get("settings")
    if not isinstance(manager, SettingsManager):
        return
    manager.refresh()
    if not manager.pending_grants():
        return
    async with manager.approval_lock:
        manager.refresh()
        pending = manager.pending_grants()
        if not pending:
            return
        manager.asked.update(g.canonical for g in pending)
        try:
            answer = await ctx.bridge.ask_permission(approval_request(manager, pending))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # no answer is no approval
            log.warning("the settings approval question got no answer: %s", exc)
            return
        if answer.choice in ("allow_once", "allow_session"):
            manager.approve(pending, save=False)
        elif answer.choice == "allow_always":
            error = manager.approve(pending, save=True)
            if error:
                ctx.bridge.show_message("error", f"Codev settings: {error}")
        elif not answer.dismissed:
            error = manager.reject(pending)
            if error:
                ctx.bridge.show_message("error", f"Codev settings: {error}")
