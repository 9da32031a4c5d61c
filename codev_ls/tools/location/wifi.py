"""The WiFi networks this machine can see, for WiFi positioning.

Provider positioning (Google Geolocation, Amap 智能硬件定位) places a device
from the access points around it: their BSSIDs (MAC addresses) and signal
strengths, at least two of them. They are read with the system's own tool:
``nmcli`` (NetworkManager, most Linux desktops) or ``netsh`` (Windows). Where
neither exists (servers, containers, macOS since ``airport`` was removed) the
scan is "not available" and ``locate`` goes straight to IP geolocation.

``CODEV_LOCATION_WIFI=0`` turns scanning off (the access point list is sent to
the map provider, which some users will not want).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from dataclasses import dataclass, field

SCAN_TIMEOUT_S = 8.0
# (mac, signal in dBm, ssid)
AccessPoint = tuple[str, int, str]

_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$")


@dataclass(slots=True)
class WifiScan:
    access_points: list[AccessPoint] = field(default_factory=list)
    # Why the list is empty or short, for the result's "tried" line.
    note: str = ""


def scanning_enabled() -> bool:
    return os.environ.get("CODEV_LOCATION_WIFI", "").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


def _split_terse(line: str) -> list[str]:
    """Split one ``nmcli -t`` line: fields joined by ``:``, with ``\\:`` inside values."""
    fields, current, escaped = [], [], False
    for ch in line:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ":":
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
    fields.append("".join(current))
    return fields


def percent_to_dbm(percent: int) -> int:
    """Signal quality 0–100 % → dBm, the usual linear mapping (100 % ≈ −50 dBm)."""
    return max(-100, min(-50, percent // 2 - 100))


def parse_nmcli(output: str) -> list[AccessPoint]:
    """``nmcli -t -f BSSID,SIGNAL,SSID device wifi list`` → access points."""
    found: dict[str, AccessPoint] = {}
    for line in output.splitlines():
        parts = _split_terse(line.strip())
        if len(parts) < 2 or not _MAC.match(parts[0]):
            continue
        try:
            signal = int(parts[1])
        except ValueError:
            continue
        mac = parts[0].lower().replace("-", ":")
        found.setdefault(mac, (mac, percent_to_dbm(signal), parts[2] if len(parts) > 2 else ""))
    return list(found.values())


def parse_netsh(output: str) -> list[AccessPoint]:
    """``netsh wlan show networks mode=bssid`` (English output) → access points."""
    found: dict[str, AccessPoint] = {}
    ssid, mac = "", ""
    for raw in output.splitlines():
        line = raw.strip()
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key.startswith("ssid"):
            ssid, mac = value, ""
        elif key.startswith("bssid"):
            mac = value.lower().replace("-", ":")
        elif key.startswith("signal") and mac and _MAC.match(mac):
            percent = int(re.sub(r"\D", "", value) or 0)
            found.setdefault(mac, (mac, percent_to_dbm(percent), ssid))
    return list(found.values())


async def scan_wifi() -> WifiScan:
    """The visible access points, or an empty scan with the reason."""
    if not scanning_enabled():
        return WifiScan(note="WiFi scanning is turned off (CODEV_LOCATION_WIFI=0)")
    if sys.platform.startswith("win"):
        tool, args, parse = "netsh", ["wlan", "show", "networks", "mode=bssid"], parse_netsh
    else:
        tool, args, parse = (
            "nmcli",
            ["-t", "-f", "BSSID,SIGNAL,SSID", "device", "wifi", "list"],
            parse_nmcli,
        )
    exe = shutil.which(tool)
    if exe is None:
        return WifiScan(note=f"no WiFi scan available ({tool} not found)")
    ran = await run_scanner(exe, args, SCAN_TIMEOUT_S)
    if ran is None:
        return WifiScan(note=f"the WiFi scan ({tool}) did not finish in {SCAN_TIMEOUT_S:g} s")
    code, out = ran
    if code != 0:
        return WifiScan(note=f"the WiFi scan ({tool}) failed with exit code {code}")
    points = parse(out)
    note = "" if len(points) >= 2 else f"only {len(points)} WiFi network(s) visible, 2 are needed"
    return WifiScan(points, note)


async def run_scanner(exe: str, args: list[str], limit_s: float) -> tuple[int, str] | None:
    """(exit code, stdout) of a system scanner (nmcli, mmcli...) in the C locale, whose
    output is parsed; None when it did not finish in ``limit_s`` seconds (it is killed)."""
    proc = await asyncio.create_subprocess_exec(
        exe,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "LC_ALL": "C", "LANG": "C"},
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), limit_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        raise
    return proc.returncode or 0, out.decode("utf-8", errors="replace")
