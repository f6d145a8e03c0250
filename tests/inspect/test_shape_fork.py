"""Shape inference in a forked child (studio.inspect.shape_fork): the same report as in process, never an answer
for a file that changed since the child read it, and no fork where one is unsafe.

The fork happens only in a single-threaded process, so the checks run in a fresh interpreter (pytest keeps
threads of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from studio.inspect import shape_fork
from studio.inspect.synthetic import save_transformer
from tests.inspect.inspect_models import nested_model, save

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


SAME_REPORT = """
import json, os, sys
from studio.core.reports import dumps
from studio.inspect import shape_fork
from studio.inspect.api import inspect_model
path = sys.argv[1]
shape_fork.prefetch(path)
forked = shape_fork.take(path) is not None   # the child started (a single-threaded process)
shape_fork.prefetch(path)
with_child = json.loads(dumps(inspect_model(path, ["all"])))
os.environ["STUDIO_SHAPE_FORK"] = "0"
assert shape_fork.start(path) is None
in_process = json.loads(dumps(inspect_model(path, ["all"])))
for r in (with_child, in_process):
    r.pop("timings")
print(json.dumps({"forked": forked, "same": with_child == in_process,
                  "tensors": len(with_child["dynamic"]["tensors"]), "inference": with_child["shape_inference"]}))
"""


def test_the_report_is_the_same_with_the_forked_inference_as_in_process(tmp_path: Path) -> None:
    for model in (save_transformer(tmp_path / "t.onnx", layers=3), save(nested_model(), tmp_path / "n.onnx")):
        out = _python(SAME_REPORT, str(model))
        assert out["forked"], model
        assert out["same"], model
        assert out["inference"] == "passed"
        assert out["tensors"] > 0  # dynamic dims traced from the inferred types (the transformer's batch/seq)


CHANGED = """
import json, os, sys
from studio.inspect import shape_fork
from studio.inspect.api import inspect_model
path, other = sys.argv[1], sys.argv[2]
child = shape_fork.start(path)
assert child is not None
child.wait()                              # it has read and inferred the first model
os.replace(other, path)                   # the file is replaced after the child read the first model
stale = child.inferred(path)
shape_fork.prefetch(path)                 # a child for the new file, taken by the inspector
rep = inspect_model(path, ["all"])
missing = shape_fork.start(path + ".missing").inferred(path + ".missing")
shape_fork.prefetch(path)                 # never taken (a command that failed early): stopped and reaped
shape_fork.cancel_prefetched()
try:
    os.waitpid(-1, os.WNOHANG)            # every other child was reaped by its answer
    reaped = False
except ChildProcessError:                 # no child process left at all
    reaped = True
print(json.dumps({"stale": stale is None, "missing": missing is None,
                  "reaped": reaped and shape_fork.take(path) is None,
                  "nodes": rep.stats.nodes, "inference": rep.shape_inference}))
"""


def test_an_answer_for_a_file_that_changed_is_never_used(tmp_path: Path) -> None:
    first = save_transformer(tmp_path / "m.onnx", layers=1)
    second = save_transformer(tmp_path / "second.onnx", layers=4)
    import onnx

    nodes = len(onnx.load(str(second), load_external_data=False).graph.node)
    out = _python(CHANGED, str(first), str(second))
    assert out["stale"]  # the child's stamp (size, mtime, inode) is not the file's any more
    assert out["missing"]  # a child that could not read its file has no answer: the parent says what is wrong
    assert out["reaped"]
    assert out["nodes"] == nodes and out["inference"] == "passed"


def test_no_fork_while_another_thread_runs(tmp_path: Path) -> None:
    model = save(nested_model(), tmp_path / "n.onnx")
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not shape_fork.enabled()
        assert shape_fork.start(model) is None
    finally:
        stop.set()
        worker.join()
