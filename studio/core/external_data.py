"""ONNX external data: where a model's weights live, whether they are all there, and the one layout the studio writes.

Past protobuf's 2 GB a model cannot be one file: its tensors live in data files beside the graph, each tensor's
``external_data`` entries naming the file (``location``, relative to the graph's folder), ``offset`` and ``length``.
Every reader of the studio goes by path and through here, so that a missing or truncated data file is one clear
error naming it (never a parse failure or an ONNX Runtime message about a tensor) and a location that leaves the
model's folder is refused.

The studio writes one layout (``write_layout``): ``X.onnx`` + ``X.onnx.data``, offsets aligned to 4 KiB so that a
runtime may map the file instead of reading it, tensors of 1 KiB and more in the data file. It streams: tensors are
copied file to file in bounded chunks (``copy_file_range`` where the kernel has it), never all held at once; only
the graph itself (small once the weights are out) is parsed. No numpy, no ``onnx`` package (studio.core.onnx_light).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from studio.core.errors import ModelError

ALIGN = 4096  # data offsets: a page, so ONNX Runtime can map the file (onnx allows up to 64 KiB of padding)
THRESHOLD = 1024  # tensors of at least this many bytes go to the data file (onnx's own default)
PROTOBUF_LIMIT = 2 ** 31 - 1  # a serialized ModelProto cannot be larger
LARGE_BYTES = 1_800_000_000  # weights past this: external data by default (room left for the graph itself)
CHUNK = 64 << 20  # bytes per copy step: the most a copy holds in memory
EXTERNAL = 1  # TensorProto.EXTERNAL
_DTYPE_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16, 16: 2,
                17: 1, 18: 1, 19: 1, 20: 1, 21: 1, 22: 1, 23: 1}  # TensorProto.DataType -> bytes per element


def data_name(model_path: Path | str) -> str:
    """The data file the studio writes beside ``X.onnx``: ``X.onnx.data``."""
    return f"{Path(model_path).name}.data"


def _entries(t: Any) -> dict[str, str]:
    return {e.key: e.value for e in t.external_data}  # the last entry of a key counts (as onnx reads them)


def iter_tensors(model: Any) -> Iterator[Any]:
    """Every TensorProto that may hold weights: initializers and tensor attributes (Constant values), in the main
    graph and every nested one."""
    stack = [model.graph]
    while stack:
        g = stack.pop()
        yield from g.initializer
        for sp in g.sparse_initializer:
            yield sp.values
            yield sp.indices
        for node in g.node:
            for a in node.attribute:
                if a.type == 4:  # TENSOR
                    yield a.t
                elif a.type == 9:  # TENSORS
                    yield from a.tensors
                elif a.type == 5:  # GRAPH
                    stack.append(a.g)
                elif a.type == 10:  # GRAPHS
                    stack.extend(a.graphs)


def is_external(t: Any) -> bool:
    return t.data_location == EXTERNAL


def uses_external_data(model: Any) -> bool:
    return any(is_external(t) for t in iter_tensors(model))


@dataclass
class DataFile:
    """One data file a model references: how many tensors, and how far into it they reach."""

    location: str
    path: Path
    tensors: int = 0
    needed: int = 0  # the largest offset + length of its tensors
    first_tensor: str = ""
    size: int | None = None  # on disk; None: missing

    @property
    def ok(self) -> bool:
        return self.size is not None and self.size >= self.needed


def _safe_location(location: str, model_path: Path) -> Path:
    """The data file of ``location`` beside the model; ModelError for a path that leaves the model's folder."""
    p = PurePosixPath(location.replace("\\", "/"))
    if not location or p.is_absolute() or ".." in p.parts or location.startswith("~"):
        raise ModelError(f"external data location {location!r} of {model_path.name} points outside its folder",
                         offending=f"{model_path}: location {location!r}",
                         hint="data files must sit in the model's folder (re-export or re-save the model)")
    return model_path.parent / Path(*p.parts)


def data_files(model: Any, model_path: Path | str, tensors: Iterable[Any] | None = None) -> list[DataFile]:
    """The data files ``model`` (parsed without its weights) references, with their sizes on disk. ``tensors``:
    the ones to look at when the caller has them indexed (default: ``iter_tensors``, which reads every node)."""
    model_path = Path(model_path)
    files: dict[str, DataFile] = {}
    for t in iter_tensors(model) if tensors is None else tensors:
        if not is_external(t):
            continue
        e = _entries(t)
        loc = e.get("location", "")
        df = files.get(loc)
        if df is None:
            df = files[loc] = DataFile(loc, _safe_location(loc, model_path), first_tensor=t.name)
        df.tensors += 1
        length = int(e["length"]) if e.get("length") else tensor_nbytes(t)
        df.needed = max(df.needed, int(e.get("offset") or 0) + length)
    for df in files.values():
        try:
            st = df.path.stat()
            df.size = st.st_size if os.path.isfile(df.path) else None
        except OSError:
            df.size = None
    return sorted(files.values(), key=lambda d: d.location)


def tensor_nbytes(t: Any) -> int:
    n = 1
    for d in t.dims:
        n *= int(d)
    return n * _DTYPE_BYTES.get(t.data_type, 0)


def check_data_files(model: Any, model_path: Path | str, tensors: Iterable[Any] | None = None) -> list[DataFile]:
    """Every data file ``model`` references exists beside ``model_path`` and is long enough for its tensors;
    ModelError naming the first that is not (missing, truncated, a folder). Returns them (empty: no external data)."""
    model_path = Path(model_path)
    files = data_files(model, model_path, tensors)
    for df in files:
        if df.size is None:
            raise ModelError(f"external data file {df.location} of {model_path.name} is missing "
                             f"({df.tensors} tensor(s), e.g. {df.first_tensor!r}, live in it)",
                             offending=str(df.path),
                             hint=f"keep {model_path.name} and its data file(s) together in one folder "
                                  "(copy or move them as a set), or re-export the model")
        if df.size < df.needed:
            raise ModelError(f"external data file {df.location} of {model_path.name} is truncated: {df.size:,} "
                             f"bytes, its tensors need {df.needed:,}", offending=str(df.path),
                             hint="the copy is incomplete; copy it again from the source, or re-export the model")
    return files


def read_graph(model_path: Path | str) -> Any:
    """The ModelProto of ``model_path`` without its external weights (onnx_light: no numpy); ModelError naming the
    file when it cannot be parsed."""
    from studio.core.onnx_light import proto

    p = Path(model_path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read {p}: {exc.strerror or exc}", offending=str(p),
                         hint="check the path and its permissions") from None
    try:
        return proto().ModelProto.FromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf raises assorted errors on garbage
        raise ModelError(f"not a readable ONNX model ({type(exc).__name__})", offending=str(p),
                         hint="the file is corrupt, truncated or not ONNX; re-export it") from None


def check_model_files(model_path: Path | str) -> list[DataFile]:
    """``check_data_files`` on a model file (its graph parsed here)."""
    return check_data_files(read_graph(model_path), model_path)


def weight_bytes(model: Any) -> int:
    """Bytes of every tensor's data, inline or external (the size the weights take on disk)."""
    total = 0
    for t in iter_tensors(model):
        if is_external(t):
            e = _entries(t)
            total += int(e["length"]) if e.get("length") else tensor_nbytes(t)
        else:
            total += len(t.raw_data) if t.raw_data else tensor_nbytes(t)
    return total


@dataclass
class LayoutResult:
    """What ``write_layout`` wrote: the graph file, its data file (None: all inline), bytes moved, files read."""

    model: Path
    data: Path | None
    data_bytes: int = 0
    tensors: int = 0
    sources: list[Path] = field(default_factory=list)


def _copy_range(src_fd: int, dst_fd: int, src_off: int, length: int, dst_off: int,
                progress: Callable[[int], None] | None) -> None:
    """``length`` bytes from ``src_fd`` at ``src_off`` to ``dst_fd`` at ``dst_off``, in the kernel where it can."""
    done = 0
    fast = hasattr(os, "copy_file_range")
    while done < length:
        n = min(CHUNK, length - done)
        copied = 0
        if fast:
            try:
                copied = os.copy_file_range(src_fd, dst_fd, n, src_off + done, dst_off + done)
            except OSError:
                fast = False
        if not copied:
            buf = os.pread(src_fd, n, src_off + done)
            if not buf:
                raise ModelError(f"external data ended early while copying ({done:,} of {length:,} bytes)",
                                 offending=f"fd {src_fd}", hint="the data file is truncated; re-export the model")
            copied = os.pwrite(dst_fd, buf, dst_off + done)
        done += copied
        if progress is not None:
            progress(copied)


def _convert_range(src_fd: int, dst_fd: int, src_off: int, length: int, dst_off: int, fn: Callable[[bytes], bytes],
                   progress: Callable[[int], None] | None) -> int:
    """``length`` bytes from ``src_fd`` through ``fn`` chunk by chunk (elementwise: a chunk is whole elements) to
    ``dst_fd`` at ``dst_off``; returns the bytes written."""
    done = written = 0
    while done < length:
        buf = os.pread(src_fd, min(CHUNK, length - done), src_off + done)
        if not buf:
            raise ModelError(f"external data ended early while converting ({done:,} of {length:,} bytes)",
                             offending=f"fd {src_fd}", hint="the data file is truncated; re-export the model")
        out = fn(buf)
        view = memoryview(out)
        n = 0
        while n < len(out):
            n += os.pwrite(dst_fd, view[n:], dst_off + written + n)
        done += len(buf)
        written += len(out)
        if progress is not None:
            progress(len(buf))
    return written


def write_layout(src: Path | str, dest: Path | str, *, external: bool = True, threshold: int = THRESHOLD,
                 progress: Callable[[int], None] | None = None, check_cancel: Callable[[], None] | None = None,
                 model: Any = None, consume: bool = False,
                 convert: Callable[[Any], Callable[[bytes], bytes] | None] | None = None) -> LayoutResult:
    """Rewrite the model at ``src`` (inline weights, one data file, or torch's one file per tensor) as ``dest`` +
    ``dest.data`` (``external``) or as one file; returns what was written and the data files it read (the caller
    deletes those once it no longer needs ``src``). ``src`` may equal ``dest``: the graph is replaced last.

    Memory: the graph without its weights, plus inline tensors when the source has them (then it is < 2 GB), plus
    one copy chunk. ``progress(n)`` hears bytes copied; ``check_cancel`` may raise between tensors (the partial
    data file is removed). ``consume``: a source file holding one tensor (TorchScript's layout) is deleted once
    copied, so the disk holds one tensor twice at most, not the whole model (the caller's private files only).
    ``convert(tensor)``: an elementwise bytes -> bytes function for an external tensor whose type the caller
    changed in ``model`` (an FP16 conversion of weights left on disk), or None to copy it as it is; each entry's
    ``length`` must then give the source bytes."""
    src, dest = Path(src), Path(dest)
    model = model if model is not None else read_graph(src)
    sources = check_data_files(model, src)
    data_path = dest.with_name(data_name(dest)) if external else None
    if not external and weight_bytes(model) > PROTOBUF_LIMIT - (1 << 24):
        raise ModelError(f"{src.name} holds {weight_bytes(model) / 1e9:.1f} GB of weights: past protobuf's 2 GB "
                         "limit it cannot be one file", offending=str(src), hint="keep its external data file")
    tmp_data = dest.with_name(f".{data_name(dest)}.partial") if data_path is not None else None
    result = LayoutResult(model=dest, data=data_path, sources=[d.path for d in sources])
    fds: dict[str, int] = {}
    users: dict[str, int] = {}  # location -> tensors still to copy from it
    for t in iter_tensors(model):
        if is_external(t):
            loc = _entries(t).get("location", "")
            users[loc] = users.get(loc, 0) + 1
    out_fd = os.open(tmp_data, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644) if tmp_data is not None else None
    tmp_graph = dest.with_name(f".{dest.name}.partial")
    try:
        offset = 0
        for t in iter_tensors(model):
            if check_cancel is not None:
                check_cancel()
            if is_external(t):
                e = _entries(t)
                loc = e.get("location", "")
                if loc not in fds:
                    fds[loc] = os.open(_safe_location(loc, src), os.O_RDONLY)
                length = int(e["length"]) if e.get("length") else tensor_nbytes(t)
                src_off = int(e.get("offset") or 0)
                fn = convert(t) if convert is not None else None
                inline = out_fd is None or length < threshold  # back inline (small tensors; small models)
                if inline:
                    t.raw_data = os.pread(fds[loc], length, src_off)
                    if fn is not None:
                        t.raw_data = fn(t.raw_data)
                elif fn is not None:
                    offset = -(-offset // ALIGN) * ALIGN
                    length = _convert_range(fds[loc], out_fd, src_off, length, offset, fn, progress)
                else:
                    offset = -(-offset // ALIGN) * ALIGN
                    _copy_range(fds[loc], out_fd, src_off, length, offset, progress)
                users[loc] -= 1
                if consume and users[loc] == 0 and (data_path is None or loc != data_path.name):
                    os.close(fds.pop(loc))
                    _safe_location(loc, src).unlink(missing_ok=True)
                if inline:
                    del t.external_data[:]
                    t.data_location = 0
                    continue
            else:
                if out_fd is None or not t.HasField("raw_data") or len(t.raw_data) < threshold:
                    continue
                length = len(t.raw_data)
                offset = -(-offset // ALIGN) * ALIGN
                view = memoryview(t.raw_data)
                written = 0
                while written < length:
                    written += os.pwrite(out_fd, view[written:written + CHUNK], offset + written)
                if progress is not None:
                    progress(length)
                t.ClearField("raw_data")
            del t.external_data[:]
            for key, value in (("location", data_path.name), ("offset", str(offset)), ("length", str(length))):
                kv = t.external_data.add()
                kv.key, kv.value = key, value
            t.data_location = EXTERNAL
            offset += length
            result.tensors += 1
        result.data_bytes = offset
        if out_fd is not None:
            os.ftruncate(out_fd, offset)
        tmp_graph.write_bytes(model.SerializeToString())
        if tmp_data is not None and data_path is not None:
            os.replace(tmp_data, data_path)
        os.replace(tmp_graph, dest)
    except BaseException:
        for p in (tmp_data, tmp_graph):
            if p is not None:
                p.unlink(missing_ok=True)
        raise
    finally:
        for fd in fds.values():
            os.close(fd)
        if out_fd is not None:
            os.close(out_fd)
    return result


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(tag: int, length: int) -> bytes:
    """A length-delimited field's key and length (wire type 2)."""
    return _varint(tag << 3 | 2) + _varint(length)


def write_inline(src: Path | str, dest: Path | str, *, model: Any = None,
                 progress: Callable[[int], None] | None = None) -> Path:
    """``src`` (a graph with external data) as one file ``dest``, streamed: the protobuf is written piece by piece,
    each main-graph initializer's bytes copied from its data file after the rest of its TensorProto (protobuf
    takes fields in any order), so the weights are never all in memory. Past 2 GB: ModelError (protobuf cannot)."""
    src, dest = Path(src), Path(dest)
    model = model if model is not None else read_graph(src)
    check_data_files(model, src)
    total = weight_bytes(model)
    if total > PROTOBUF_LIMIT - (64 << 20):
        raise ModelError(f"{src.name} holds {total / 1e9:.2f} GB of weights: past protobuf's 2 GB limit it cannot be "
                         "one file", offending=str(src),
                         hint="keep its external data file (drop --no-external-data)")
    fds: dict[str, int] = {}

    def fd_of(loc: str) -> int:
        if loc not in fds:
            fds[loc] = os.open(_safe_location(loc, src), os.O_RDONLY)
        return fds[loc]

    try:
        main = [t for t in model.graph.initializer if is_external(t)]
        main_ids = {id(t) for t in main}
        for t in iter_tensors(model):  # tensors elsewhere (attributes, nested graphs): small, inlined in the proto
            if is_external(t) and id(t) not in main_ids:
                e = _entries(t)
                t.raw_data = os.pread(fd_of(e.get("location", "")), int(e.get("length") or tensor_nbytes(t)),
                                      int(e.get("offset") or 0))
                del t.external_data[:]
                t.data_location = 0
        pb = type(model)
        graph = type(model.graph)()
        graph.CopyFrom(model.graph)
        del graph.initializer[:]
        graph.initializer.extend(t for t in model.graph.initializer if not is_external(t))
        pieces: list[tuple[bytes, str, int, int]] = []  # (TensorProto bytes without data, location, offset, length)
        for t in main:
            e = _entries(t)
            head = type(t)()
            head.CopyFrom(t)
            del head.external_data[:]
            head.ClearField("data_location")
            pieces.append((head.SerializeToString(), e.get("location", ""), int(e.get("offset") or 0),
                           int(e.get("length") or tensor_nbytes(t))))
        graph_bytes = graph.SerializeToString()
        sizes = [len(h) + len(_field(9, n)) + n for h, _, _, n in pieces]
        graph_len = len(graph_bytes) + sum(len(_varint(s)) + 1 + s for s in sizes)
        rest = pb()
        rest.CopyFrom(model)
        rest.ClearField("graph")
        tmp = dest.with_name(f".{dest.name}.partial")
        out = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            pos = 0

            def put(data: bytes) -> None:
                nonlocal pos
                view = memoryview(data)
                while view:
                    n = os.pwrite(out, view, pos)
                    pos += n
                    view = view[n:]

            put(rest.SerializeToString() + _field(7, graph_len) + graph_bytes)
            for (head, loc, off, n), size in zip(pieces, sizes, strict=True):
                put(_field(5, size) + head + _field(9, n))
                _copy_range(fd_of(loc), out, off, n, pos, progress)
                pos += n
            os.ftruncate(out, pos)
        except BaseException:
            os.close(out)
            tmp.unlink(missing_ok=True)
            raise
        os.close(out)
        os.replace(tmp, dest)
    finally:
        for fd in fds.values():
            os.close(fd)
    return dest


def model_files(model_path: Path | str) -> list[Path]:
    """The model file and its data files (checked: ModelError when one is missing or short), model first."""
    p = Path(model_path)
    return [p, *(d.path for d in check_model_files(p))]
