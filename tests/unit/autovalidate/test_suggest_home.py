"""The suggestion rules never import the engine: profile_table/suggest(df) run it from
streamdq.commands.table_profile, and the old names still resolve to them. No Spark."""

from __future__ import annotations

import subprocess
import sys


def test_old_names_resolve_to_the_engine_side() -> None:
    import streamdq.autovalidate.suggest as rules
    import streamdq.commands.table_profile as table_profile

    assert rules.profile_table is table_profile.profile_table
    assert rules.suggest is table_profile.suggest_table


def test_importing_the_suggestion_rules_does_not_import_the_engine() -> None:
    code = (
        "import sys, streamdq.autovalidate.suggest\n"
        "print(sorted(m for m in sys.modules if m.startswith(('streamdq.engine', 'streamdq.commands'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
