"""``streamdq serve``: the read-only query service and web console over the Delta state store.

``StateReader`` (reader.py) reads the tables with delta-rs (no Spark); ``create_app``
(app.py) is the FastAPI app: CDAP's aggregation endpoints (aggregations.py), metric
history, check results, alerts, quarantine, learned programs and the quality score
(quality.py), the OpenAPI spec, and the console at ``/`` (static/, with vega, vega-lite and
vega-embed vendored). FastAPI and uvicorn come with the ``serve`` extra; this package imports
them only in app.py. See docs/service.md.
"""
