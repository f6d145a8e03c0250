"""Which node of model B is which node of model A: names first, then structure, in time linear in the graph.

No pairwise comparison of all nodes ever happens (100k unnamed nodes must pair in a second or two):

1. name: nodes whose own (non-empty) name and subgraph path agree.
2. propagation: tensor pairs (same name in both models, or the same slot of two matched nodes) pair their
   unmatched producers of the same op, and their unmatched consumers of the same op at the same input slot
   when each side has exactly one; every new pair pushes its own tensors. Each tensor pair is seen once.
3. op changes: two unmatched producers of a tensor pair with different ops are the same node changed when one
   of their inputs is paired too (the node sits between matched neighbours: Relu -> Sigmoid).
4. ambiguous consumers: same op, same slot, equal counts on both sides (Q/K/V MatMuls of one hidden state)
   pair in graph order.
5. signature: what is still unmatched pairs by (op, domain, input/output dtypes and shapes) when a signature
   has as many nodes on each side, in graph order.
Steps 2-4 repeat until nothing new pairs; 5 runs once and is followed by 2-4 again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from studio.inspect.model import LoadedModel, NodeRef, TensorInfo

NAME = "name"
TENSOR = "tensor"  # through a tensor name both models share
NEIGHBOURS = "neighbours"  # through already matched producers / consumers
SIGNATURE = "signature"  # op + dtypes + shapes, in graph order
METHODS = (NAME, TENSOR, NEIGHBOURS, SIGNATURE)


@dataclass
class Side:
    """One model's nodes as the matcher reads them: index-based producer / consumer tables."""

    refs: list[NodeRef]
    named: list[bool]  # the node has its own name (not the reader's op_index spelling)
    producer: dict[str, int]  # tensor -> index of the node writing it
    consumers: dict[str, list[tuple[int, int]]]  # tensor -> [(node index, input slot)]
    tensors: dict[str, TensorInfo]
    sources: set[str]  # graph inputs and initializers: tensors no node writes
    graph_inputs: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, lm: LoadedModel) -> Side:
        refs = lm.nodes
        producer: dict[str, int] = {}
        consumers: dict[str, list[tuple[int, int]]] = {}
        get = consumers.get
        for i, ref in enumerate(refs):
            for o in ref.outputs:
                producer[o] = i
            slot = 0
            for t in ref.inputs:
                if t:
                    lst = get(t)
                    if lst is None:
                        consumers[t] = [(i, slot)]
                    else:
                        lst.append((i, slot))
                slot += 1
        producer.pop("", None)
        named = [bool(ref.node.name) for ref in refs]
        inputs = set(lm.graph_inputs)
        return cls(refs, named, producer, consumers, lm.tensors, inputs | set(lm.initializers), inputs)


@dataclass
class Matching:
    """The pairs: ``a2b[i]`` is the B index of A node i (-1: none); ``how[i]`` the method that paired it."""

    a2b: list[int]
    b2a: list[int]
    how: list[str]
    rounds: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def pairs(self) -> Iterator[tuple[int, int, str]]:
        for i, j in enumerate(self.a2b):
            if j >= 0:
                yield i, j, self.how[i]

    @property
    def matched(self) -> int:
        return sum(self.counts.values())


class _Matcher:
    def __init__(self, a: Side, b: Side) -> None:
        self.a, self.b = a, b
        self.a2b = [-1] * len(a.refs)
        self.b2a = [-1] * len(b.refs)
        self.how = [""] * len(a.refs)
        self.queue: deque[tuple[str, str, str]] = deque()
        self.seen: set[tuple[str, str]] = set()
        self.op_changes: list[tuple[int, int]] = []
        self.ambiguous: list[tuple[list[int], list[int]]] = []

    # -- pairing -------------------------------------------------------------------------------------------
    def pair(self, i: int, j: int, how: str) -> None:
        self.a2b[i], self.b2a[j], self.how[i] = j, i, how
        ra, rb = self.a.refs[i], self.b.refs[j]
        seen, queue = self.seen, self.queue
        for xs, ys in ((ra.inputs, rb.inputs), (ra.outputs, rb.outputs)):
            for x, y in zip(xs, ys, strict=False):
                if x and y and (x, y) not in seen:
                    seen.add((x, y))
                    queue.append((x, y, NEIGHBOURS))

    # -- phases ----------------------------------------------------------------------------------------------
    def by_name(self) -> None:
        b_keys = {ref.key: j for j, ref in enumerate(self.b.refs) if self.b.named[j]}
        for i, ref in enumerate(self.a.refs):
            if self.a.named[i]:
                j = b_keys.get(ref.key)
                if j is not None:
                    self.pair(i, j, NAME)

    def seed_shared_tensors(self) -> None:
        a, b = self.a, self.b
        shared = (a.producer.keys() | a.sources) & (b.producer.keys() | b.sources)
        self.seen.update((t, t) for t in shared)
        self.queue.extend((t, t, TENSOR) for t in shared)

    def drain(self) -> int:
        """Propagate through the queued tensor pairs; the number of new pairs."""
        a, b, a2b, b2a = self.a, self.b, self.a2b, self.b2a
        arefs, brefs = a.refs, b.refs
        aprod, bprod, acons, bcons = a.producer.get, b.producer.get, a.consumers.get, b.consumers.get
        queue, pair = self.queue, self.pair
        new = 0
        while queue:
            x, y, how = queue.popleft()
            label = NEIGHBOURS if how == NEIGHBOURS else TENSOR
            pa, pb = aprod(x), bprod(y)
            if pa is not None and pb is not None and a2b[pa] < 0 and b2a[pb] < 0:
                ra, rb = arefs[pa], brefs[pb]
                if ra.op_type == rb.op_type and ra.domain == rb.domain:
                    pair(pa, pb, label)
                    new += 1
                else:
                    self.op_changes.append((pa, pb))
            ca, cb = acons(x), bcons(y)
            if not ca or not cb:
                continue
            if len(ca) == 1 and len(cb) == 1:  # the common case: one reader on each side
                (i, si), (j, sj) = ca[0], cb[0]
                if si == sj and a2b[i] < 0 and b2a[j] < 0:
                    ri, rj = arefs[i], brefs[j]
                    if ri.op_type == rj.op_type and ri.domain == rj.domain:
                        pair(i, j, label)
                        new += 1
                continue
            ga = _unpaired_readers(ca, a2b, arefs)
            if not ga:
                continue
            gb = _unpaired_readers(cb, b2a, brefs)
            for key, la in ga.items():
                lb = gb.get(key)
                if lb is None:
                    continue
                if len(la) == 1 and len(lb) == 1:
                    if a2b[la[0]] < 0 and b2a[lb[0]] < 0:
                        pair(la[0], lb[0], label)
                        new += 1
                elif len(la) == len(lb):
                    self.ambiguous.append((la, lb))
        return new

    def resolve_op_changes(self) -> int:
        new = 0
        pending, self.op_changes = self.op_changes, []
        for i, j in pending:
            if self.a2b[i] < 0 and self.b2a[j] < 0 and self._anchored(i, j):
                self.pair(i, j, NEIGHBOURS)
                new += 1
        return new

    def _anchored(self, i: int, j: int) -> bool:
        """Some input of A node i and B node j comes from the same place (paired producers or one source)."""
        ra, rb = self.a.refs[i], self.b.refs[j]
        if not ra.inputs and not rb.inputs:
            return True
        for x, y in zip(ra.inputs, rb.inputs, strict=False):
            if not x or not y:
                continue
            px, py = self.a.producer.get(x), self.b.producer.get(y)
            if px is not None and py is not None and self.a2b[px] == py:
                return True
            if px is None and py is None and x == y:
                return True
        return False

    def resolve_ambiguous(self) -> int:
        new = 0
        pending, self.ambiguous = self.ambiguous, []
        for la, lb in pending:
            fa = [i for i in la if self.a2b[i] < 0]
            fb = [j for j in lb if self.b2a[j] < 0]
            if fa and len(fa) == len(fb):
                for i, j in zip(sorted(fa), sorted(fb), strict=True):
                    self.pair(i, j, NEIGHBOURS)
                    new += 1
        return new

    def by_signature(self) -> int:
        ga: dict[Any, list[int]] = {}
        for i, ref in enumerate(self.a.refs):
            if self.a2b[i] < 0:
                ga.setdefault(_signature(ref, self.a.tensors), []).append(i)
        if not ga:
            return 0
        gb: dict[Any, list[int]] = {}
        for j, ref in enumerate(self.b.refs):
            if self.b2a[j] < 0:
                gb.setdefault(_signature(ref, self.b.tensors), []).append(j)
        new = 0
        for key, la in ga.items():
            lb = gb.get(key)
            if lb is not None and len(lb) == len(la):
                for i, j in zip(la, lb, strict=True):
                    self.pair(i, j, SIGNATURE)
                    new += 1
        return new

    def settle(self) -> int:
        rounds = 0
        while True:
            rounds += 1
            self.drain()
            if self.resolve_op_changes():
                continue
            if self.resolve_ambiguous():
                continue
            return rounds


def _unpaired_readers(readers: list[tuple[int, int]], paired: list[int],
                      refs: list[NodeRef]) -> dict[tuple[str, str, int], list[int]]:
    """The readers (node, input slot) of one tensor not paired yet, by (op type, domain, slot)."""
    out: dict[tuple[str, str, int], list[int]] = {}
    for i, slot in readers:
        if paired[i] < 0:
            r = refs[i]
            out.setdefault((r.op_type, r.domain, slot), []).append(i)
    return out


def _tensor_sig(name: str, tensors: dict[str, TensorInfo]) -> tuple[int, tuple[Any, ...] | None]:
    info = tensors.get(name)
    if info is None:
        return (0, None)
    return (info.elem_type, None if info.shape is None else tuple(info.shape))


def _signature(ref: NodeRef, tensors: dict[str, TensorInfo]) -> tuple[Any, ...]:
    return (ref.op_type, ref.domain, tuple(_tensor_sig(t, tensors) for t in ref.inputs),
            tuple(_tensor_sig(t, tensors) for t in ref.outputs))


def match_models(a: Side, b: Side) -> Matching:
    """Pair the nodes of two models (see the module docstring for the order of the rules)."""
    m = _Matcher(a, b)
    m.by_name()
    m.seed_shared_tensors()
    rounds = m.settle()
    if any(j < 0 for j in m.a2b) and any(i < 0 for i in m.b2a):
        if m.by_signature():
            rounds += m.settle()
    counts = dict.fromkeys(METHODS, 0)
    for j, how in zip(m.a2b, m.how, strict=True):
        if j >= 0:
            counts[how] += 1
    return Matching(m.a2b, m.b2a, m.how, rounds=rounds, counts=counts)
