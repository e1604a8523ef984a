"""The ``_streamdq_*`` column contract is written in one module (streamdq/metadata_columns.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from streamdq import metadata_columns

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"^_streamdq_[a-z0-9_]*[a-z0-9]$")  # a prefix ending in "_" names private views
# working columns private to one computation, never part of a decoded frame
PRIVATE = {"_streamdq_avh_segment"}


def test_no_module_spells_a_metadata_column_name_but_the_contract():
    offenders = []
    for folder in ("streamdq", "connectors", "state"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "metadata_columns.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                text = node.value if isinstance(node, ast.Constant) else None
                if isinstance(text, str) and NAME.match(text) and text not in PRIVATE:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert offenders == [], "use streamdq.metadata_columns:\n" + "\n".join(offenders)


def test_every_named_column_is_metadata_and_distinct():
    names = [
        v for k, v in vars(metadata_columns).items() if k.isupper() and isinstance(v, str) and k != "PREFIX"
    ]
    assert len(names) == len(set(names)) >= 13
    assert all(metadata_columns.is_metadata(n) for n in names)
    assert metadata_columns.data_columns(["a", *names, "b"]) == ["a", "b"]
