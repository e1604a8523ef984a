"""The FastAPI application of ``streamdq serve``: the REST API (``/v1``), its OpenAPI spec and the console.

``create_app(reader, token=None)`` builds the app over one ``StateReader``. Every route is a
read; every error is JSON ``{"error": message, "status": code}``:

* 404: an unknown dataset, field, aggregation, metric, measure or route;
* 400: a malformed parameter (a time that is neither epoch seconds nor ISO 8601, an empty or
  reversed range, a page outside its bounds, a value of the wrong type);
* 401: a missing or wrong bearer token when the app was built with ``token``.

A user's input never yields a 500 (tests/integration/test_service_api.py runs schemathesis
over ``/openapi.json``). With ``token`` set, every ``/v1`` route needs ``Authorization: Bearer
<token>``; the console page and its static assets are served without it (they hold no data)
and the page sends the token it was given in its URL (``/#token=...``).

The console is ``/`` (static/index.html), its assets under ``/static`` (vega, vega-lite and
vega-embed vendored in static/vendor/, nothing from a CDN).
"""

from __future__ import annotations

import hmac
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from streamdq.service import aggregations as A
from streamdq.service.errors import NotFound, ServiceError
from streamdq.service.measures import measure_catalog, measure_points, pass_records
from streamdq.service.quality import quality
from streamdq.service.reader import MAX_PAGE, StateReader
from streamdq.service.times import time_range

API_VERSION = "1"
Scope = Literal["batch", "window", "total"]


class ErrorOut(BaseModel):
    error: str
    status: int


class AggregationOut(BaseModel):
    name: str
    combinable: bool
    key: str
    parameters: dict[str, Any]


class MergedOut(BaseModel):
    data: Any
    windows: int
    approximate: bool
    errorBound: Any
    failure: str | None
    aggregation: str
    field: str
    key: str
    startTimestamp: float
    endTimestamp: float


class TimeValue(BaseModel):
    timestamp: Any
    data: Any
    windowEnd: Any
    open: bool | None
    failure: str | None


class TimeSeriesOut(BaseModel):
    timeValues: list[TimeValue]


class MeasureOut(BaseModel):
    name: str
    resultType: str | None
    scope: str | None
    points: int


class MeasurePointOut(BaseModel):
    timestamp: float | None
    batchId: int
    scope: str | None
    resultType: str
    value: Any
    failure: str | None
    windowStart: float | None
    windowEnd: float | None


class PassRecordOut(BaseModel):
    timestamp: float | None
    queryId: str | None
    batchId: int
    scope: str | None
    windowStart: float | None
    windowEnd: float | None
    measure: dict[str, Any]
    check: dict[str, bool]
    # the seed's key; a Python keyword, hence the alias
    pass_: bool = Field(alias="pass")


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "malformed parameter"},
    404: {"model": ErrorOut, "description": "unknown dataset, field, aggregation, metric or measure"},
    401: {"model": ErrorOut, "description": "missing or wrong bearer token (only with --token)"},
}

START = Query(None, description="range start (inclusive): epoch seconds or ISO 8601; default: the beginning")
END = Query(None, description="range end (exclusive): epoch seconds or ISO 8601; default: no end")
DatasetPath = Annotated[str, Path(description="the dataset (a run config's `dataset`)")]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status)


def create_app(reader: StateReader, token: str | None = None) -> FastAPI:
    """The service app over ``reader`` (see the module docstring)."""
    app = FastAPI(
        title="streamdq query service",
        version=API_VERSION,
        description=(
            "Read-only REST API over a streamdq Delta state store: datasets and their status, "
            "CDAP-style field aggregations merged over time ranges, metric history, check results, "
            "alerts, quarantined rows, learned programs, the table quality score, SQL measures and "
            "measure/check/pass documents. Timestamps are "
            "epoch seconds; ISO 8601 is accepted in parameters. See docs/service.md."
        ),
    )
    bearer = HTTPBearer(
        auto_error=False, description="required only when the server was started with --token"
    )

    def check_token(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:  # noqa: B008
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise _Unauthorized()

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(_Unauthorized)
    async def unauthorized(request: Request, exc: _Unauthorized) -> JSONResponse:
        response = _error(401, "missing or wrong bearer token: send 'Authorization: Bearer <token>'")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()))
            problems.append(f"{where}: {e.get('msg', 'invalid')}")
        return _error(400, "; ".join(problems) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = str(exc.detail) if exc.status_code != 404 else f"no such route: {request.url.path}"
        return _error(exc.status_code, message)

    # the bearer scheme appears in the OpenAPI spec (and is checked) only when a token is set
    guard = [Depends(check_token)] if token is not None else []

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        with reader.locked():
            return fn(*args, **kwargs)

    # -- datasets ------------------------------------------------------------------
    @app.get("/v1/health", tags=["service"], dependencies=guard, responses=ERRORS)
    def health() -> dict[str, Any]:
        """The service is up; ``state`` is the store it reads and whether it holds any batch."""
        return {"status": "ok", "state": reader.root, "datasets": len(run(reader.dataset_names))}

    @app.get("/v1/datasets", tags=["datasets"], dependencies=guard, responses=ERRORS)
    def datasets() -> list[dict[str, Any]]:
        """Every dataset with its last status, last batch, batch count and latest quality score."""
        return list(run(reader.datasets))

    @app.get("/v1/datasets/{dataset}", tags=["datasets"], dependencies=guard, responses=ERRORS)
    def dataset(dataset: DatasetPath) -> dict[str, Any]:
        """The dataset's last status, with its last report's counters, watermark and alerts."""
        return dict(run(reader.dataset, dataset))

    # -- CDAP's aggregations ----------------------------------------------------------
    @app.get("/v1/source/{source}/fields", tags=["aggregations"], dependencies=guard, responses=ERRORS)
    def fields(
        source: str, startTimestamp: str | None = START, endTimestamp: str | None = END
    ) -> list[dict[str, Any]]:
        """The fields (metric instances; ``*`` is the dataset) with window metrics in the range."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(A.fields, reader, source, rng))

    @app.get(
        "/v1/source/{source}/fields/{field}/aggregations",
        tags=["aggregations"],
        dependencies=guard,
        responses=ERRORS,
        response_model=list[AggregationOut],
    )
    def aggregations(
        source: str, field: str, startTimestamp: str | None = START, endTimestamp: str | None = END
    ) -> list[dict[str, Any]]:
        """The field's aggregations as ``{"name", "combinable"}`` (plus the analyzer ``key`` and parameters)."""
        rng = time_range(startTimestamp, endTimestamp)
        return [a.to_dict() for a in run(A.catalog, reader, source, field, rng)]

    @app.get(
        "/v1/source/{source}/fields/{field}/aggregations/{aggregation}",
        tags=["aggregations"],
        dependencies=guard,
        responses=ERRORS,
        response_model=MergedOut,
    )
    def merged(
        source: str,
        field: str,
        aggregation: str,
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
        key: str | None = Query(
            None, description="the analyzer key (from the aggregations list) when several share the name"
        ),
        quantile: float | None = Query(
            None, description="for ApproxQuantile: any quantile in [0, 1] from the column's sketch"
        ),
    ) -> dict[str, Any]:
        """A combinable aggregation merged over the windows inside the range: a histogram as
        ``{"data": {"200": 504, "404": 23}}``, a distinct count or a quantile as a number."""
        rng = time_range(startTimestamp, endTimestamp)

        def answer() -> dict[str, Any]:
            agg = A.find(reader, source, field, aggregation, key, rng)
            analyzer = A.analyzer_for(agg, quantile)
            result = A.merge(reader, source, analyzer, rng)
            return {
                "data": result.data,
                "windows": result.windows,
                "approximate": result.approximate,
                "errorBound": result.error_bound,
                "failure": result.failure,
                "aggregation": agg.name,
                "field": field,
                "key": analyzer.key(),
                **rng.to_dict(),
            }

        return dict(run(answer))

    @app.get(
        "/v1/source/{source}/fields/{field}/timeseries/{aggregation}",
        tags=["aggregations"],
        dependencies=guard,
        responses=ERRORS,
        response_model=TimeSeriesOut,
    )
    def timeseries(
        source: str,
        field: str,
        aggregation: str,
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
        key: str | None = Query(None, description="the analyzer key when several share the name"),
    ) -> dict[str, Any]:
        """One value per window: ``{"timeValues": [{"timestamp": ..., "data": ...}]}``."""
        rng = time_range(startTimestamp, endTimestamp)

        def answer() -> dict[str, Any]:
            reader.require(source)
            points = reader.window_series(source, field, key, aggregation, rng)
            if points is None:  # the 404 naming the field's aggregations (or its fields)
                A.pick(A.catalog(reader, source, field, rng), aggregation, key)
                points = []
            return {"timeValues": A.series_data(points)}

        return dict(run(answer))

    # -- metrics, checks, alerts ----------------------------------------------------
    @app.get("/v1/datasets/{dataset}/metrics", tags=["metrics"], dependencies=guard, responses=ERRORS)
    def metric_catalog(
        dataset: DatasetPath,
        scope: Scope | None = None,
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """The distinct metrics stored for the dataset (scope, entity, instance, name, analyzer key)."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(reader.metric_catalog, dataset, rng, scope))

    @app.get("/v1/datasets/{dataset}/metrics/{name}", tags=["metrics"], dependencies=guard, responses=ERRORS)
    def metric_history(
        dataset: DatasetPath,
        name: str,
        scope: Scope | None = None,
        instance: str | None = None,
        key: str | None = None,
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """The metric's history per scope: one point per batch (batch, total) or per window
        (the latest value; ``open`` marks a window still filling)."""
        rng = time_range(startTimestamp, endTimestamp)

        def answer() -> list[dict[str, Any]]:
            points = reader.history(dataset, name, rng, scope=scope, instance=instance, key=key)
            if not points and not any(
                m["name"] == name for m in reader.metric_catalog(dataset, time_range(None, None))
            ):
                raise NotFound(f"dataset {dataset!r} has no metric {name!r}")
            return points

        return list(run(answer))

    @app.get("/v1/datasets/{dataset}/results", tags=["checks"], dependencies=guard, responses=ERRORS)
    def results(
        dataset: DatasetPath,
        status: Literal["Success", "Failure"] | None = Query(None, description="a constraint outcome"),
        scope: Scope | None = None,
        limit: int = Query(1000, ge=1, le=10000, description="the newest this many results"),
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """Constraint outcomes in the range, in time order (window scope: at the window start)."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(reader.results, dataset, rng, status=status, scope=scope, limit=limit))

    @app.get("/v1/datasets/{dataset}/alerts", tags=["checks"], dependencies=guard, responses=ERRORS)
    def alerts(
        dataset: DatasetPath, startTimestamp: str | None = START, endTimestamp: str | None = END
    ) -> list[dict[str, Any]]:
        """The alerts the alert policy raised (violations and resolutions) in the range."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(reader.alerts, dataset, rng))

    # -- measures and measure/check/pass documents (docs/measure-check-pass.md) --------
    @app.get(
        "/v1/datasets/{dataset}/measures",
        tags=["measures"],
        dependencies=guard,
        responses=ERRORS,
        response_model=list[MeasureOut],
    )
    def measures(
        dataset: DatasetPath,
        scope: Scope | None = None,
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """The SQL measures stored for the dataset in the range (name, result type, scope, points)."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(measure_catalog, reader, dataset, rng, scope))

    @app.get(
        "/v1/datasets/{dataset}/measures/{name}",
        tags=["measures"],
        dependencies=guard,
        responses=ERRORS,
        response_model=list[MeasurePointOut],
    )
    def measure(
        dataset: DatasetPath,
        name: Annotated[str, Path(description="the measure's name (`measures[].name`)")],
        scope: Scope | None = Query(None, description="batch, window or total; default: every scope"),
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """The measure's stored values in the range, oldest first: one per batch (batch, total
        scope; at the processing time) or per closed window (window scope; at the window start,
        the latest value); a failed point has ``value`` null and its ``failure``."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(measure_points, reader, dataset, name, rng, scope))

    @app.get(
        "/v1/datasets/{dataset}/pass",
        tags=["measures"],
        dependencies=guard,
        responses=ERRORS,
        response_model=list[PassRecordOut],
        response_model_by_alias=True,
    )
    def pass_history(
        dataset: DatasetPath,
        scope: Scope | None = Query(None, description="batch, window or total; default: every scope"),
        limit: int = Query(1000, ge=1, le=10000, description="the newest this many documents"),
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> list[dict[str, Any]]:
        """The measure/check/pass documents ``{"measure", "check", "pass"}`` of the batches
        processed in the range (by processing time), oldest first, with their scope, window,
        query and batch."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(pass_records, reader, dataset, rng, scope, limit))

    @app.get("/v1/datasets/{dataset}/quarantine", tags=["quarantine"], dependencies=guard, responses=ERRORS)
    def quarantine(
        dataset: DatasetPath,
        offset: int = Query(0, ge=0, le=2**62),
        limit: int = Query(50, ge=1, le=MAX_PAGE),
        reason: str | None = Query(None, description="only rows whose reason contains this text"),
        startTimestamp: str | None = START,
        endTimestamp: str | None = END,
    ) -> dict[str, Any]:
        """One page of quarantined rows (by ingestion time), with the total count."""
        rng = time_range(startTimestamp, endTimestamp)
        return dict(run(reader.quarantine, dataset, rng, offset=offset, limit=limit, reason=reason))

    @app.get("/v1/datasets/{dataset}/programs", tags=["monitors"], dependencies=guard, responses=ERRORS)
    def programs(dataset: DatasetPath) -> list[dict[str, Any]]:
        """The programs learned from history (``auto_validate:``), as of the last committed batch."""
        return list(run(reader.programs, dataset))

    @app.get("/v1/datasets/{dataset}/quality", tags=["monitors"], dependencies=guard, responses=ERRORS)
    def quality_score(
        dataset: DatasetPath, startTimestamp: str | None = START, endTimestamp: str | None = END
    ) -> list[dict[str, Any]]:
        """The table quality score per window, its components' scores and the metrics that drove it."""
        rng = time_range(startTimestamp, endTimestamp)
        return list(run(quality, reader, dataset, rng))

    # -- the console ----------------------------------------------------------------
    static = resources.files("streamdq.service") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.get("/", include_in_schema=False)
    def console() -> FileResponse:
        return FileResponse(str(static / "index.html"), media_type="text/html")

    return app


class _Unauthorized(Exception):
    """Raised by the token check; answered 401."""
