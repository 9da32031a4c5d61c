"""Model access: providers (Anthropic, OpenAI-compatible), the agent loop, chat sessions.

Nothing here imports the provider SDKs at import time: the server's cold start
must not pay for them. ``service.ModelService`` is what the rest of the engine
sees, as ``engine.services["model"]``.
"""
