"""The built-in tools, one module per tool (see engine/registry.py for the list)."""
