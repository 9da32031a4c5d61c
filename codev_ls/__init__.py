"""Codev LS: the tool engine of an AI coding assistant, hosted in a language server."""

from __future__ import annotations

__version__ = "0.1.0"
