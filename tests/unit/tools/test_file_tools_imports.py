"""The file tools load pypdf, Pillow and nbformat only when a PDF, image or notebook is used."""

from __future__ import annotations

import subprocess
import sys


def test_heavy_libraries_are_not_imported_with_the_tools():
    code = (
        "import sys\n"
        "import codev_ls.tools.read, codev_ls.tools.edit, codev_ls.tools.write\n"
        "import codev_ls.tools.grep, codev_ls.tools.glob, codev_ls.tools.notebook_edit\n"
        "print(sorted(m for m in ('PIL', 'pypdf', 'nbformat') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
