"""The tool engine: Tool, registry, the run_tool_use lifecycle. Never imports pygls."""
