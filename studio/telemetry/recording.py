"""Recordings: one SQLite file per run (metadata, samples, windows, verdicts, level results) and replay.

The file is written under a temporary name and renamed when the run ends, so a recording on disk is
always complete; a run that crashes leaves no half-written file behind.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.telemetry.samples import Sample

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE samples(t REAL NOT NULL, target TEXT, series TEXT NOT NULL, value REAL, unit TEXT,
                     source TEXT, note TEXT);
CREATE INDEX samples_by_series ON samples(target, series, t);
CREATE TABLE windows(id INTEGER PRIMARY KEY AUTOINCREMENT, target TEXT, level TEXT, idx INTEGER,
                     start REAL, end REAL, requests INTEGER, successes INTEGER, throughput_rps REAL,
                     p50_ms REAL, p90_ms REAL, p95_ms REAL, p99_ms REAL, max_ms REAL, errors TEXT,
                     bytes_per_s REAL, histogram TEXT, data TEXT);
CREATE TABLE verdicts(window_id INTEGER, target TEXT, tier TEXT, verdict TEXT, cost REAL, failed TEXT,
                      data TEXT);
CREATE TABLE levels(target TEXT, label TEXT, data TEXT);
"""


class Recorder:
    """Thread-safe writer: the load generator's loop and the collector thread both add to it."""

    def __init__(self, path: Path | str, meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        self.tmp.unlink(missing_ok=True)
        self._db = sqlite3.connect(self.tmp, check_same_thread=False)
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()
        self._closed = False
        self.set_meta("schema_version", SCHEMA_VERSION)
        self.set_meta("created", time.time())
        for k, v in (meta or {}).items():
            self.set_meta(k, v)

    def set_meta(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, default=str)))

    def add_samples(self, samples: list[Sample]) -> None:
        rows = [(s.t, s.target, s.series, s.value, s.unit, s.source, s.note) for s in samples]
        with self._lock:
            if not self._closed:
                self._db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def add_window(self, target: str, window: Any, verdict: Any | None = None) -> int:
        w = window.to_dict()
        lat = w["latency"]
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO windows(target, level, idx, start, end, requests, successes, throughput_rps, p50_ms,"
                " p90_ms, p95_ms, p99_ms, max_ms, errors, bytes_per_s, histogram, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (target, w["level"], w["index"], w["start"], w["end"], w["requests"], w["successes"],
                 w["throughput_rps"], lat["p50_ms"], lat["p90_ms"], lat["p95_ms"], lat["p99_ms"], lat["max_ms"],
                 json.dumps(w["errors"]), w["bytes_per_s"], w["histogram"],
                 json.dumps({k: v for k, v in w.items() if k != "histogram"})))
            wid = int(cur.lastrowid or 0)
            if verdict is not None:
                v = verdict.to_dict()
                self._db.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 (wid, target, v["tier"], v["verdict"], v["cost"],
                                  ",".join(verdict.failed_checks), json.dumps(v)))
            self._db.commit()
        return wid

    def add_level(self, target: str, level: Any) -> None:
        d = level.to_dict()
        d.pop("windows", None)
        with self._lock:
            self._db.execute("INSERT INTO levels VALUES (?, ?, ?)", (target, d["label"], json.dumps(d)))

    def close(self, ok: bool = True) -> Path | None:
        """Commit and rename into place (ok) or discard the temporary file."""
        with self._lock:
            if self._closed:
                return self.path if ok else None
            self._closed = True
            if ok:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('finished', ?)", (json.dumps(time.time()),))
            self._db.commit()
            self._db.close()
        if ok:
            os.replace(self.tmp, self.path)
            return self.path
        self.tmp.unlink(missing_ok=True)
        return None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(ok=exc_type is None)


class Recording:
    """Read side of a recording: metadata, samples, windows, verdicts, level results, replay."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"recording not found: {self.path}", offending=str(self.path),
                             hint="record one with `studio bench ... --record FILE.sqlite`")
        try:
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            self.meta = {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a studio recording: {exc}", offending=str(self.path),
                             hint="recordings are SQLite files written by `studio bench --record`") from exc
        if "schema_version" not in self.meta:
            raise InputError("not a studio recording (no schema_version)", offending=str(self.path))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def targets(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT target FROM samples ORDER BY target")]

    def series(self, target: str | None = None) -> list[str]:
        q, args = "SELECT DISTINCT series FROM samples", ()
        if target is not None:
            q, args = q + " WHERE target = ?", (target,)
        return [r[0] for r in self._db.execute(q + " ORDER BY series", args)]

    def samples(self, series: str | None = None, target: str | None = None) -> list[Sample]:
        where, args = [], []
        if series is not None:
            where.append("series = ?")
            args.append(series)
        if target is not None:
            where.append("target = ?")
            args.append(target)
        q = "SELECT t, series, value, source, target, unit, note FROM samples"
        if where:
            q += " WHERE " + " AND ".join(where)
        rows = self._db.execute(q + " ORDER BY t, rowid", args)
        return [Sample(t=r[0], series=r[1], value=r[2], source=r[3] or "", target=r[4] or "", unit=r[5] or "",
                       note=r[6] or "") for r in rows]

    def windows(self, target: str | None = None) -> list[dict[str, Any]]:
        q = "SELECT id, target, data, histogram FROM windows"
        rows = self._db.execute(q + (" WHERE target = ?" if target else "") + " ORDER BY id",
                                (target,) if target else ())
        out = []
        for wid, tgt, data, hist in rows:
            d = json.loads(data)
            d.update(id=wid, target=tgt, histogram=hist)
            out.append(d)
        return out

    def verdicts(self, target: str | None = None) -> list[dict[str, Any]]:
        q = "SELECT window_id, target, data FROM verdicts"
        rows = self._db.execute(q + (" WHERE target = ?" if target else "") + " ORDER BY window_id",
                                (target,) if target else ())
        return [{**json.loads(d), "window_id": wid, "target": t} for wid, t, d in rows]

    def levels(self) -> list[dict[str, Any]]:
        return [{**json.loads(d), "target": t} for t, _label, d in self._db.execute("SELECT * FROM levels")]

    def iter_batches(self, batch_s: float = 0.25) -> Iterator[list[Sample]]:
        """Samples in time order, grouped in batches spanning ``batch_s`` of recorded time."""
        batch: list[Sample] = []
        t_first: float | None = None
        for s in self.samples():
            if t_first is None:
                t_first = s.t
            if s.t - t_first >= batch_s and batch:
                yield batch
                batch, t_first = [], s.t
            batch.append(s)
        if batch:
            yield batch

    def replay(self, sink: Callable[[list[Sample]], None], speed: float = 0.0,
               stop: Callable[[], bool] | None = None) -> int:
        """Feed the recorded samples to ``sink`` as a live run would; ``speed`` 1.0 is real time, 0 as fast
        as possible. Returns the number of samples replayed."""
        n = 0
        t0_wall = time.monotonic()
        t0_rec: float | None = None
        for batch in self.iter_batches():
            if stop is not None and stop():
                break
            if speed > 0:
                t0_rec = batch[0].t if t0_rec is None else t0_rec
                delay = (batch[0].t - t0_rec) / speed - (time.monotonic() - t0_wall)
                if delay > 0:
                    time.sleep(delay)
            sink(batch)
            n += len(batch)
        return n
