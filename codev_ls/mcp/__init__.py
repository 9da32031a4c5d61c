"""MCP servers: their tools join the pool as ``mcp__<server>__<tool>``.

- ``config``: ``.mcp.json`` and ``mcpServers`` in user settings, ``${VAR}`` expansion
- ``connection``: one server's lifecycle (start, restart with backoff, stop, timeouts)
- ``manager``: all servers of an engine (``engine.services["mcp"]``), status, reports
- ``tool``: an MCP tool as a :class:`~codev_ls.engine.tool.Tool`
- ``content``: MCP results → the model API's content blocks
- ``deferral``: deferring MCP tools behind ToolSearch when they are many

Nothing here imports the ``mcp`` SDK at import time: the connection task imports
it in a worker thread when the first server starts.
"""
