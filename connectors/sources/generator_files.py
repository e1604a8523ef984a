"""Write the generated stream as files, for the ``files`` and ``clf`` sources (demo, tests, bench).

``write_json_files`` writes JSON Lines files, ``write_clf_files`` access-log lines in Combined Log
Format derived from the same records (host from the user, path from the order, status, bytes from
the amount, user agent from the device). Each file is written under a temporary name and then
renamed into the directory, so a Spark file stream source never sees a half-written file.
File names carry the first index (``part-000000001000.json``), so repeated calls with
consecutive ranges add new files in order. Empty ranges write nothing.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from streamdq.connectors.sources.generator import GeneratorConfig, generate, to_json

_AGENTS = {
    "web": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "ios": "ShopApp/5.2 (iPhone; iOS 18.1)",
    "android": "ShopApp/5.2 (Linux; Android 15)",
}


def to_clf_line(record: Mapping[str, Any]) -> str:
    """A Combined Log Format line for a generated record (its ``ts`` is the request time)."""
    ts = dt.datetime.fromisoformat(str(record["ts"]).replace("Z", "+00:00"))
    user = str(record.get("user_id") or "u0")
    host = f"10.{int(user[1:] or 0) // 256 % 256}.{int(user[1:] or 0) % 256}.{len(user)}"
    status = int(record.get("status_code") or 200)
    amount = record.get("amount")
    size = "-" if status >= 300 or not isinstance(amount, int | float) else str(int(amount * 40) + 200)
    agent = _AGENTS.get(str(record.get("device")), str(record.get("device")))
    path = f"/api/orders/{record.get('order_id')}"
    when = ts.strftime("%d/%b/%Y:%H:%M:%S %z")
    return f'{host} - {user} [{when}] "POST {path} HTTP/1.1" {status} {size} "https://shop.example.com/cart" "{agent}"'


def _write(
    config: GeneratorConfig,
    directory: str | os.PathLike[str],
    start_index: int,
    end_index: int,
    records_per_file: int,
    suffix: str,
    render: Callable[[Mapping[str, Any]], str],
) -> list[Path]:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for lo in range(start_index, end_index, max(1, records_per_file)):
        hi = min(end_index, lo + max(1, records_per_file))
        lines = [render(rec) for _, rec in generate(config, lo, hi)]
        if not lines:
            continue
        final = out / f"part-{lo:012d}{suffix}"
        tmp = out / f".{final.name}.tmp"
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        os.replace(tmp, final)
        written.append(final)
    return written


def write_json_files(
    config: GeneratorConfig,
    directory: str | os.PathLike[str],
    start_index: int,
    end_index: int,
    records_per_file: int = 1000,
) -> list[Path]:
    """JSON Lines files with records ``[start_index, end_index)``; returns the paths written."""
    return _write(config, directory, start_index, end_index, records_per_file, ".json", to_json)


def write_clf_files(
    config: GeneratorConfig,
    directory: str | os.PathLike[str],
    start_index: int,
    end_index: int,
    records_per_file: int = 1000,
) -> list[Path]:
    """Combined Log Format files for records ``[start_index, end_index)``; returns the paths."""
    return _write(config, directory, start_index, end_index, records_per_file, ".log", to_clf_line)
