"""Spark's checkpoint logs rewound to the state store (engine/checkpoint_log.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamdq.engine.checkpoint_log import committed_batch, local_path, rewind


def _checkpoint(root: Path, offsets: int, commits: int) -> str:
    """Offsets entries 0..offsets-1 and commit entries 0..commits-1, each with its .crc."""
    for folder, n in (("offsets", offsets), ("commits", commits)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / folder / str(i)).write_text("v1\n{}")
            (root / folder / f".{i}.crc").write_bytes(b"crc")
    (root / "commits" / ".5.0b1d.tmp").write_text("a temporary file Spark left")
    return str(root)


def _logged(root: Path, folder: str) -> list[str]:
    return sorted(p.name for p in (root / folder).iterdir())


def test_a_commit_entry_the_store_lacks_is_removed_with_the_next_offsets(tmp_path: Path) -> None:
    # Spark committed 0..4 and planned 5; the store holds 0..3: batch 4 runs again
    chk = _checkpoint(tmp_path, offsets=6, commits=5)
    assert committed_batch(chk) == 4
    assert rewind(chk, store_last=3) == 4
    assert committed_batch(chk) == 3
    assert _logged(tmp_path, "offsets") == [
        ".0.crc",
        ".1.crc",
        ".2.crc",
        ".3.crc",
        ".4.crc",
        "0",
        "1",
        "2",
        "3",
        "4",
    ]
    assert ".4.crc" not in _logged(tmp_path, "commits") and "4" not in _logged(tmp_path, "commits")
    assert rewind(chk, store_last=3) is None  # done: a second start rewinds nothing


def test_nothing_is_rewound_when_the_store_is_up_to_date_or_holds_nothing(tmp_path: Path) -> None:
    chk = _checkpoint(tmp_path, offsets=6, commits=5)
    before = (_logged(tmp_path, "offsets"), _logged(tmp_path, "commits"))
    assert rewind(chk, store_last=4) is None  # batch 5 planned, not run: Spark runs it
    assert rewind(chk, store_last=None) is None  # a new store on an old checkpoint
    assert (_logged(tmp_path, "offsets"), _logged(tmp_path, "commits")) == before


def test_a_rewind_cut_short_is_finished_by_the_next_start(tmp_path: Path) -> None:
    # the offsets half done, the commits half not (or the other way round)
    chk = _checkpoint(tmp_path, offsets=5, commits=5)
    assert rewind(chk, store_last=3) == 4
    assert committed_batch(chk) == 3
    chk2 = _checkpoint(tmp_path / "b", offsets=7, commits=4)  # commits fine, offsets 5, 6 stale
    assert rewind(chk2, store_last=3) == 4
    assert [n for n in _logged(tmp_path / "b", "offsets") if n.isdigit()] == ["0", "1", "2", "3", "4"]


def test_a_batch_whose_offsets_are_gone_is_not_rewound(tmp_path: Path) -> None:
    chk = _checkpoint(tmp_path, offsets=3, commits=3)
    for name in ("2", ".2.crc"):
        (tmp_path / "offsets" / name).unlink()
    assert rewind(chk, store_last=1) is None
    assert committed_batch(chk) == 2


@pytest.mark.parametrize(
    ("checkpoint", "local"),
    [
        ("/data/chk", "/data/chk"),
        ("file:///data/chk", "/data/chk"),
        ("file:/data/chk", "/data/chk"),
        ("s3://b/chk", None),
    ],
)
def test_only_local_checkpoints_are_read(checkpoint: str, local: str | None) -> None:
    path = local_path(checkpoint)
    assert (str(path) if path is not None else None) == local
    if local is None:
        assert committed_batch(checkpoint) is None and rewind(checkpoint, 3) is None


def test_a_file_uri_checkpoint_is_read_like_its_path(tmp_path: Path) -> None:
    # the runner's rewind needs the query id: a file: URI is as local as its path
    from streamdq.engine.checkpoint_log import checkpoint_query_id
    from streamdq.engine.supervisor import batch_offsets

    _checkpoint(tmp_path, offsets=3, commits=3)
    (tmp_path / "metadata").write_text('{"id":"3f1c"}\n')
    (tmp_path / "offsets" / "1").write_text('v1\n{"batchWatermarkMs":0}\n{"logOffset":1}\n')
    for form in (str(tmp_path), f"file://{tmp_path}", f"file:{tmp_path}"):
        assert checkpoint_query_id(form) == "3f1c"
        assert batch_offsets(form, 1) == 'to [{"logOffset": 1}]'
    assert checkpoint_query_id(str(tmp_path / "none")) is None
    assert checkpoint_query_id("s3://b/chk") is None
