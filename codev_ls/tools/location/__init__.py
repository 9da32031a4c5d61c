"""The Location tool: places and routes with Amap (mainland China) or Google Maps.

``tool.py`` holds the Tool; ``amap.py``, ``google.py`` and ``ip.py`` speak to
the services; ``region.py`` picks the provider; ``datum.py`` converts between
GCJ-02 and WGS-84; ``render.py`` writes the results for the model.
"""
