#!/usr/bin/env python3
"""Check the import layers of streamdq with import-linter (contracts in .importlinter).

Runs as ``make lint`` (and so ``make test``): ``.venv/bin/python .ci/lint_imports.py``.

connectors/ and state/ install as ``streamdq.connectors`` and ``streamdq.state`` (pyproject
package-dir), but grimp builds its graph by walking the folder of ``streamdq`` alone. So the checked
tree is a temporary ``streamdq/`` whose entries are symlinks to ``streamdq/*``, ``connectors/`` and
``state/`` (the files as they are now; nothing is copied), put first on the path of ``lint-imports``.
Function-local imports count (grimp sees every import statement). Exit status: lint-imports' own
(0 when every contract is kept).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


def stage(root: Path, dest: Path) -> Path:
    """Lay ``dest/streamdq`` as the installed package looks: streamdq/* plus connectors and state."""
    pkg = dest / "streamdq"
    pkg.mkdir()
    for entry in sorted((root / "streamdq").iterdir()):
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    (pkg / "connectors").symlink_to(root / "connectors")
    (pkg / "state").symlink_to(root / "state")
    return dest


def lint(staged: Path, config: Path = CONFIG, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    """Run lint-imports (beside ``python``) over a staged tree; output captured."""
    exe = Path(python).parent / "lint-imports"
    env = dict(os.environ, PYTHONPATH=str(staged))
    return subprocess.run(
        [str(exe), str(config), "--no-cache"],
        cwd=staged,  # never the checkout: its streamdq/ would shadow the staged one
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="streamdq-layers-") as tmp:
        result = lint(stage(ROOT, Path(tmp)))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
