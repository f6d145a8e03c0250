"""The model repository as a file tree beside a read-only viewer (config.pbtxt with a field's line marked).

A click on a model folder shows its config.pbtxt; large or binary files are described, never loaded. Each
item keeps its absolute path, which is what callers select by (``select_path``) and what ``tree_paths`` and
``current_path`` report, so nobody needs to walk the QTreeWidget's items themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.core.units import human_bytes
from studio.gui.theme import set_role
from studio.gui.widgets.config_view import ConfigView

TEXT_SUFFIXES = {".pbtxt", ".py", ".json", ".txt", ".model", ".yaml", ".yml", ".md"}
MAX_TEXT_BYTES = 512 * 1024
MAX_TREE_ENTRIES = 2000
PATH_ROLE = Qt.ItemDataRole.UserRole


class RepoTree(QSplitter):
    """Tree of the repository's files (left) and the file viewer (right).

    ``base_dir`` returns the folder the viewer's title is relative to (the page's Repository field).
    """

    def __init__(self, base_dir: Callable[[], str] = lambda: "", parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self._base_dir = base_dir
        self.repo_label = QLabel(self.tr("No repository yet: Build writes one."))
        set_role(self.repo_label, "subheading")
        self.tree = QTreeWidget()
        self.tree.setMinimumWidth(200)
        self.tree.setHeaderLabels([self.tr("File"), self.tr("Size")])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(False)
        self.tree.currentItemChanged.connect(self._current_changed)
        self.addWidget(self.tree)
        cw = QWidget()
        cl = QVBoxLayout(cw)
        cl.setContentsMargins(0, 0, 0, 0)
        self.config_label = QLabel("config.pbtxt")  # a file name: not translated
        set_role(self.config_label, "muted")
        self.config_view = ConfigView()
        self.config_view.setPlaceholderText(self.tr("the generated config.pbtxt appears here after Build"))
        cl.addWidget(self.config_label)
        cl.addWidget(self.config_view, 1)
        self.addWidget(cw)
        self.setStretchFactor(0, 0)
        self.setStretchFactor(1, 1)
        self.setSizes([230, 520])

    # -- public API ------------------------------------------------------------------------------------
    def show_repo(self, repo: Path, select: Path | None = None) -> None:
        """Fill the file tree from ``repo`` and show ``select`` (a config.pbtxt) in the viewer."""
        self.tree.blockSignals(True)
        self.tree.clear()
        count = 0

        def add(parent: QTreeWidgetItem | QTreeWidget, folder: Path, depth: int) -> None:
            nonlocal count
            try:
                entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), int(p.name) if p.name.isdigit()
                                                                  else 0, p.name))
            except OSError:
                return
            for p in entries:
                if p.name.startswith(".") or count >= MAX_TREE_ENTRIES:
                    continue
                count += 1
                size = "" if p.is_dir() else human_bytes(p.stat().st_size) if p.exists() else "?"
                item = QTreeWidgetItem(parent, [p.name + ("/" if p.is_dir() else ""), size])
                item.setData(0, PATH_ROLE, str(p))
                item.setToolTip(0, str(p))
                if p.is_dir() and not p.is_symlink() and depth < 4:
                    add(item, p, depth + 1)

        add(self.tree, repo, 0)
        self.tree.expandAll()
        self.tree.blockSignals(False)
        self.repo_label.setText(self.tr("Repository {name}/  ·  {count} files and folders").format(name=repo.name, count=count))
        self.repo_label.setToolTip(str(repo))
        if select is not None:
            self.select_path(select)
            self.show_file(select)

    def show_file(self, path: Path) -> None:
        """Show a file of the repository: text as it is, an .onnx or other binary as a one-line note."""
        path = Path(path)
        if not path.is_file():
            self.config_label.setText(self.tr("{path} does not exist").format(path=path))
            self.config_view.show_text("", str(path))
            return
        size = path.stat().st_size
        if path.suffix in TEXT_SUFFIXES and size <= MAX_TEXT_BYTES:
            text = path.read_text(encoding="utf-8", errors="replace")
        elif path.suffix == ".onnx":
            text = self.tr("ONNX model, {size} (inspect it on the Inspect page)").format(size=human_bytes(size))
        else:
            text = self.tr("{size} binary file").format(size=human_bytes(size))
        try:
            shown = str(path.relative_to(Path(self._base_dir().strip()).expanduser()))
        except ValueError:
            shown = str(path)
        self.config_label.setText(shown)
        self.config_label.setToolTip(str(path))
        self.config_view.show_text(text, str(path))

    def select_path(self, path: Path | str) -> bool:
        """Make ``path``'s item current (a model folder then shows its config); False when it is not listed."""
        item = self._item(Path(path))
        if item is None:
            return False
        self.tree.setCurrentItem(item)
        self.tree.scrollToItem(item)
        return True

    def tree_paths(self) -> set[str]:
        """Every path the tree lists (absolute, as strings)."""
        out: set[str] = set()
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            out.add(item.data(0, PATH_ROLE))
            stack += [item.child(i) for i in range(item.childCount())]
        return out

    def current_path(self) -> str | None:
        """The path of the tree's current item, None when nothing is current."""
        item = self.tree.currentItem()
        return None if item is None else item.data(0, PATH_ROLE)

    def show_finding(self, file: str, field: str, severity: str, model: str, repo: Path) -> None:
        """A check finding: select its file (a missing one: its folder), show the model's config and mark the
        field's line."""
        path = Path(file)
        cfg = path if path.name == "config.pbtxt" else None
        if cfg is None and path.is_dir() and (path / "config.pbtxt").is_file() and path.name == model:
            cfg = path / "config.pbtxt"
        found = self.select_path(cfg or path)
        if not found and cfg is None:  # a missing file: its folder, else the model's config
            self.select_path(path.parent)
            cfg = Path(repo) / model / "config.pbtxt" if model else None
        if cfg is not None and cfg.is_file():
            self.show_file(cfg)
            self.config_view.highlight_field(field, severity)

    # -- internals -------------------------------------------------------------------------------------
    def _item(self, path: Path) -> QTreeWidgetItem | None:
        want = str(path)
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            if item.data(0, PATH_ROLE) == want:
                return item
            stack += [item.child(i) for i in range(item.childCount())]
        return None

    def _current_changed(self, item: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        if item is None:
            return
        p = Path(item.data(0, PATH_ROLE))
        if p.is_dir() and (p / "config.pbtxt").is_file():
            p = p / "config.pbtxt"
        if p.is_file():
            self.show_file(p)
