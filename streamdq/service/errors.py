"""The query service's user-facing errors: each becomes a JSON answer ``{"error": ..., "status": ...}``.

``NotFound`` (404): an unknown dataset, field, aggregation or metric; the message names it and
what exists. ``BadRequest`` (400): a malformed parameter (a time, a range, a page). The app
maps both (and FastAPI's own parameter validation) to JSON, so user input never yields a 500.
"""

from __future__ import annotations

from streamdq.errors import StreamdqError


class ServiceError(StreamdqError):
    """An error answered with ``status`` and a JSON message."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ServiceError):
    status = 404


class BadRequest(ServiceError):
    status = 400
