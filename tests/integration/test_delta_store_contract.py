"""DeltaStateStore against the StateStore contract shared with InMemoryStateStore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamdq.state import DeltaStateStore

from tests.integration.test_delta_store import crashing_store
from tests.unit.state.store_contract import StoreContract

pytestmark = pytest.mark.integration


class TestDeltaStoreContract(StoreContract):
    def open_store(self, root: Path) -> Any:
        return DeltaStateStore(str(root))

    def crash_next(self, store: Any, root: Path) -> Any:
        from streamdq.state import schemas as S

        return crashing_store(root, S.REPORTS)
