"""docs/configuration.md shows every table of the run config as the code has it: a key added to a
table without its row in the docs fails here (the rows come from ``Table.markdown()``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamdq.connectors.sinks.config import SINK_TABLES
from streamdq.connectors.sources.spec import SOURCE_TABLES

from streamdq.alerts.policy import ALERTS_TABLE
from streamdq.autovalidate.avh.monitor import AUTO_VALIDATE_TABLE
from streamdq.autovalidate.quality.monitor import QUALITY_TABLE
from streamdq.config_schema import Table
from streamdq.engine.config import BOUNDS_TABLE, RUN_TABLE, STATE_TABLE, SUPERVISION_TABLE

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
TABLES = {
    "run config": RUN_TABLE,
    "state": STATE_TABLE,
    "supervision": SUPERVISION_TABLE,
    "event_time_bounds": BOUNDS_TABLE,
    "alerts": ALERTS_TABLE,
    "auto_validate": AUTO_VALIDATE_TABLE,
    "quality_score": QUALITY_TABLE,
    **{f"sink {kind}": table for kind, table in SINK_TABLES.items()},
    **{f"source {kind}": table for kind, table in SOURCE_TABLES.items()},
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_docs_show_each_table_as_the_code_has_it(name: str) -> None:
    table: Table = TABLES[name]
    assert table.markdown() in DOC.read_text(encoding="utf-8"), (
        f"docs/configuration.md: the {name} table differs from the code; paste Table.markdown()"
    )


def test_every_key_has_a_line_of_documentation() -> None:
    for name, table in TABLES.items():
        assert all(doc for _key, _kind, _default, doc in table.rows()), name
