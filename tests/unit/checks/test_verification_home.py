"""verify lives above the checks (streamdq.verification, beside the engine), and every old
import path still gives the same function: importing the checks never imports the engine."""

from __future__ import annotations

import subprocess
import sys


def test_every_import_path_gives_the_same_verify() -> None:
    import streamdq
    import streamdq.checks
    import streamdq.checks.verification as alias
    import streamdq.verification as home

    assert streamdq.verify is streamdq.checks.verify is alias.verify is home.verify
    assert streamdq.VerificationResult is streamdq.checks.VerificationResult is home.VerificationResult
    assert alias.overall_status is home.overall_status


def test_importing_the_checks_does_not_import_the_engine() -> None:
    code = (
        "import sys, streamdq.checks, streamdq.checks.verification\n"
        "print(sorted(m for m in sys.modules if m.startswith(('streamdq.engine', 'streamdq.verification'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
