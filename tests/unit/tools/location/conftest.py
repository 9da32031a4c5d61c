"""Fixtures for the Location tool: fake services on 127.0.0.1, an Engine, a runner.

No test may reach the internet: every base URL the tool knows is pointed at a
closed local port unless a test starts the matching fake. WiFi and cell
scanning are off unless a test turns them on with a fake ``nmcli``/``mmcli``.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codev_ls.bridge import ScriptedBridge
from codev_ls.engine.outcome import ProgressUpdate, ToolOutcome, ToolUseUpdate
from codev_ls.engine.runtime import Engine
from tests.fakes.amap import FakeAmap
from tests.fakes.google_maps import FakeGoogleMaps
from tests.fakes.ipgeo import FakeIpService

AMAP_KEY = "amapKEY-5d41402abc4b2a76b9719d911017c592"
GOOGLE_KEY = "AIzaSyFAKE-google-key-0123456789abcdef"

# A local port nothing listens on: connections are refused at once.
CLOSED = "http://127.0.0.1:9"

URL_VARS = (
    "AMAP_BASE_URL",
    "AMAP_LOCATE_BASE_URL",
    "GOOGLE_MAPS_BASE_URL",
    "GOOGLE_PLACES_BASE_URL",
    "GOOGLE_ROUTES_BASE_URL",
    "GOOGLE_GEOLOCATION_BASE_URL",
    "IP_API_BASE_URL",
    "IPINFO_BASE_URL",
    "IPAPI_CO_BASE_URL",
)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in URL_VARS:
        monkeypatch.setenv(var, CLOSED)
    for var in (
        "AMAP_API_KEY",
        "GOOGLE_MAPS_API_KEY",
        "GOOGLE_MAPS_API",
        "IPINFO_TOKEN",
        "CODEV_LOCATION_TIMEOUT",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CODEV_LOCATION_WIFI", "0")
    monkeypatch.setenv("CODEV_LOCATION_CELL", "0")
    monkeypatch.setenv("GOOGLE_MAPS_PAGETOKEN_DELAY", "0.1")
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.fixture
def amap(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAmap]:
    fake = FakeAmap(AMAP_KEY)
    url = fake.start()
    monkeypatch.setenv("AMAP_BASE_URL", url)
    monkeypatch.setenv("AMAP_LOCATE_BASE_URL", url)
    monkeypatch.setenv("AMAP_API_KEY", AMAP_KEY)
    yield fake
    fake.stop()


@pytest.fixture
def google(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGoogleMaps]:
    fake = FakeGoogleMaps(GOOGLE_KEY)
    url = fake.start()
    for var in (
        "GOOGLE_MAPS_BASE_URL",
        "GOOGLE_PLACES_BASE_URL",
        "GOOGLE_ROUTES_BASE_URL",
        "GOOGLE_GEOLOCATION_BASE_URL",
    ):
        monkeypatch.setenv(var, url)
    monkeypatch.setenv("GOOGLE_MAPS_API_KEY", GOOGLE_KEY)
    yield fake
    fake.stop()


@dataclass
class IpFakes:
    ip_api: FakeIpService
    ipinfo: FakeIpService
    ipapi_co: FakeIpService


@pytest.fixture
def ipgeo(monkeypatch: pytest.MonkeyPatch) -> Iterator[IpFakes]:
    fakes = IpFakes(FakeIpService("ip-api"), FakeIpService("ipinfo"), FakeIpService("ipapi.co"))
    for fake, var in (
        (fakes.ip_api, "IP_API_BASE_URL"),
        (fakes.ipinfo, "IPINFO_BASE_URL"),
        (fakes.ipapi_co, "IPAPI_CO_BASE_URL"),
    ):
        monkeypatch.setenv(var, fake.start())
    yield fakes
    for fake in (fakes.ip_api, fakes.ipinfo, fakes.ipapi_co):
        fake.stop()


NMCLI_OUTPUT = (
    "AA\\:BB\\:CC\\:DD\\:EE\\:01:82:Office WiFi\n"
    "AA\\:BB\\:CC\\:DD\\:EE\\:02:64:Guest\\:5G\n"
    "AA\\:BB\\:CC\\:DD\\:EE\\:03:40:\n"
)


@pytest.fixture
def fake_nmcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real ``nmcli`` executable on PATH that prints a terse WiFi list."""
    folder = tmp_path / "bin"
    folder.mkdir()
    data = folder / "wifi.txt"
    data.write_text(NMCLI_OUTPUT)
    script = folder / "nmcli"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write(open({str(data)!r}).read())\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CODEV_LOCATION_WIFI", "1")
    return data


# ``mmcli -K -m any --location-get`` and ``mmcli -K -m any`` of a modem on a 3G cell.
MMCLI_LOCATION = """\
modem.location.3gpp.mcc                 : 460
modem.location.3gpp.mnc                 : 0
modem.location.3gpp.lac                 : 1123
modem.location.3gpp.tac                 : --
modem.location.3gpp.cid                 : 0458884D
modem.location.gps.utc                  : --
"""
MMCLI_GENERIC = """\
modem.dbus-path                                 : /org/freedesktop/ModemManager1/Modem/0
modem.generic.state                             : connected
modem.generic.access-technologies.length        : 1
modem.generic.access-technologies.value[1]      : umts
modem.generic.signal-quality.value              : 60
modem.generic.signal-quality.recent             : yes
"""


@pytest.fixture
def fake_mmcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real ``mmcli`` executable on PATH; ``exit`` in its folder makes it fail (no modem)."""
    folder = tmp_path / "mmbin"
    folder.mkdir()
    (folder / "location.txt").write_text(MMCLI_LOCATION)
    (folder / "generic.txt").write_text(MMCLI_GENERIC)
    script = folder / "mmcli"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"folder = {str(folder)!r}\n"
        "if os.path.exists(os.path.join(folder, 'exit')):\n"
        "    sys.stderr.write('error: couldn\\'t find modem\\n'); sys.exit(1)\n"
        "name = 'location.txt' if '--location-get' in sys.argv else 'generic.txt'\n"
        "sys.stdout.write(open(os.path.join(folder, name)).read())\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CODEV_LOCATION_CELL", "1")
    return folder


@pytest.fixture
def legacy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use Google's legacy Places and Directions APIs (``GOOGLE_MAPS_API=legacy``)."""
    monkeypatch.setenv("GOOGLE_MAPS_API", "legacy")


@dataclass
class Runner:
    engine: Engine
    bridge: ScriptedBridge
    updates: list[ToolUseUpdate] = field(default_factory=list)

    async def __call__(self, **tool_input: Any) -> ToolOutcome:
        return await self.engine.run_tool("Location", tool_input, on_update=self.updates.append)

    def progress(self) -> list[str]:
        return [u.progress.message for u in self.updates if isinstance(u, ProgressUpdate)]

    def progress_types(self) -> set[str]:
        return {u.progress.type for u in self.updates if isinstance(u, ProgressUpdate)}


@pytest.fixture
async def run(workspace: Path) -> AsyncIterator[Runner]:
    bridge = ScriptedBridge()
    engine = Engine(workspace, bridge)
    yield Runner(engine, bridge)
    await engine.aclose()


@pytest.fixture
def log_text(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog
