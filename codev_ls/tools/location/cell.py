"""The mobile network cell this machine is attached to, for cell positioning.

Both providers place a device from cell towers as well as WiFi networks:
Amap's 智能硬件定位 takes ``bts`` (the serving cell, ``mcc,mnc,lac,cellid,signal``)
and ``nearbts`` (neighbours) with ``accesstype=0``; Google's Geolocation API
takes ``cellTowers``. A desktop or laptop knows its cell only through a mobile
broadband modem, read here with ModemManager's ``mmcli`` (Linux):

- ``mmcli -K -m any --location-get``: ``modem.location.3gpp.mcc/mnc`` (decimal),
  ``.lac``/``.tac`` and ``.cid`` (hexadecimal), ``--`` when unknown. The 3GPP
  location source must be enabled (``mmcli -m any --location-enable-3gpp``,
  usually as root); until it is, the values are ``--``.
- ``mmcli -K -m any``: ``modem.generic.access-technologies.value[1]`` (``lte``,
  ``umts``, ``gsm``…) and ``modem.generic.signal-quality.value`` (percent).

Without a modem (most desktops), without ModemManager (Windows, macOS) or with
the location source off, the scan is empty with the reason, and ``locate``
goes on with WiFi or IP geolocation. ``CODEV_LOCATION_CELL=0`` turns it off.
Only the serving cell is read: ModemManager reports neighbours only on some
modems (``--get-cell-info``), and one cell is what the APIs need at least.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

from codev_ls.tools.location.wifi import percent_to_dbm, run_scanner

SCAN_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class CellTower:
    mcc: int
    mnc: int
    # Location area code (2G/3G) or tracking area code (LTE/5G).
    lac: int
    cell_id: int
    dbm: int | None
    # ModemManager's access technology: gsm, gprs, edge, umts, hsdpa, hsupa, hspa, lte, 5gnr…
    radio: str


@dataclass(slots=True)
class CellScan:
    towers: list[CellTower] = field(default_factory=list)
    # Why the list is empty, for the result's "tried" line.
    note: str = ""


def scanning_enabled() -> bool:
    value = os.environ.get("CODEV_LOCATION_CELL", "").strip().lower()
    return value not in ("0", "false", "no", "off")


def parse_keyvalue(output: str) -> dict[str, str]:
    """``mmcli -K`` output (``key : value`` lines) → a dict; ``--`` values left out."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        key, sep, value = line.partition(":")
        value = value.strip()
        if sep and value and value != "--":
            found[key.strip()] = value
    return found


def _hex(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(value, 16)
    except ValueError:
        return None


def _dec(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def parse_cell(location: dict[str, str], generic: dict[str, str]) -> CellTower | None:
    """The serving cell from ``--location-get`` and the modem's general status."""
    mcc = _dec(location.get("modem.location.3gpp.mcc"))
    mnc = _dec(location.get("modem.location.3gpp.mnc"))
    lac = _hex(location.get("modem.location.3gpp.lac")) or _hex(
        location.get("modem.location.3gpp.tac")
    )
    cid = _hex(location.get("modem.location.3gpp.cid"))
    if mcc is None or mnc is None or lac is None or cid is None:
        return None
    quality = _dec(generic.get("modem.generic.signal-quality.value"))
    radio = generic.get("modem.generic.access-technologies.value[1]", "").lower()
    return CellTower(mcc, mnc, lac, cid, percent_to_dbm(quality) if quality else None, radio)


async def _mmcli(exe: str, *args: str) -> tuple[int, str]:
    return await run_scanner(exe, list(args), SCAN_TIMEOUT_S) or (-1, "")


async def scan_cells() -> CellScan:
    """The serving cell of this machine's modem, or an empty scan with the reason."""
    if not scanning_enabled():
        return CellScan(note="cell scanning is turned off (CODEV_LOCATION_CELL=0)")
    exe = shutil.which("mmcli")
    if exe is None:
        return CellScan(
            note="no cell positioning: it needs a mobile broadband modem and ModemManager "
            "(mmcli not found)"
        )
    code, out = await _mmcli(exe, "-K", "-m", "any", "--location-get")
    if code != 0:
        return CellScan(note="no cell positioning: ModemManager found no modem")
    location = parse_keyvalue(out)
    _, generic_out = await _mmcli(exe, "-K", "-m", "any")
    tower = parse_cell(location, parse_keyvalue(generic_out))
    if tower is None:
        return CellScan(
            note="no cell positioning: the modem reports no cell (its 3GPP location source "
            "may be off: mmcli -m any --location-enable-3gpp, as root)"
        )
    return CellScan([tower])
