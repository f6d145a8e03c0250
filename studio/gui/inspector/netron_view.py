"""The Netron tab: the ``netron`` package served on loopback, shown in a QWebEngineView, verdicts injected.

No network: requests to anything but the loopback server are blocked, the consent banner is answered by a
cookie set before Netron's scripts run (so it never asks ipinfo.io where the user is), and its usage beacon
is replaced by a no-op. Netron gives each node the SVG id ``node-name-<name>`` and each edge
``edge-<tensor>``; colours (verdicts, or per-op profile heat) and selection are applied to those through
``runJavaScript``. Clicks on a node come back as a console message (no QWebChannel needed). If QtWebEngine
cannot start, the tab says why. Names are drawn with the studio's font families (studio.gui.fonts: the
installed fallbacks for CJK and other scripts), set before Netron measures its labels.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import QLabel, QStackedLayout, QVBoxLayout, QWidget

from studio.gui.graph import palette

CHROMIUM_FLAGS = ("--no-sandbox", "--disable-gpu")
SELECT_PREFIX = "studio-select:"

_BOOT_JS = r"""
(function () {
  document.cookie = 'consent=' + Date.now() + ';path=/;max-age=31536000';
  // the studio's font families first (with the installed fallbacks for CJK and other scripts), before Netron
  // measures its labels: names are drawn with a font that has their glyphs instead of boxes
  document.addEventListener('DOMContentLoaded', function () {
    var st = document.createElement('style');
    st.id = 'studio-fonts';
    st.textContent = 'body, svg text, .graph-node text { font-family: ' + __STUDIO_FONTS__ + ' !important; }';
    document.head.appendChild(st);
  });
  try {
    Object.defineProperty(Navigator.prototype, 'sendBeacon', {value: function () { return true; }, configurable: true});
  } catch (e) {}
  // Netron nags forever ("Please update") when its build date is > 180 days old: make the build "today".
  new MutationObserver(function (records, obs) {
    var m = document.querySelector('meta[name="date"]');
    if (m) { m.setAttribute('content', new Date().toISOString().slice(0, 19).replace('T', ' ')); obs.disconnect(); }
  }).observe(document, {childList: true, subtree: true});
  document.addEventListener('click', function (ev) {
    var g = ev.target && ev.target.closest ? ev.target.closest('g.graph-node') : null;
    if (g && g.id && g.id.indexOf('node-name-') === 0) { console.info('studio-select:' + g.id.slice(10)); }
  }, true);
  window.__studio = {
    selected: null,
    touched: [],
    ready: function () { return document.querySelectorAll('g.graph-node, g.graph-input').length; },
    style: function (selColor) {
      if (!document.getElementById('studio-style')) {
        var st = document.createElement('style');
        st.id = 'studio-style';
        st.textContent = '.select > .node.node-border { stroke: ' + selColor + ' !important; stroke-width: 3px !important; }';
        document.head.appendChild(st);
      }
    },
    clear: function () {
      this.touched.forEach(function (g) {
        g.querySelectorAll('.node-item-type > path, .node-item-type > text').forEach(function (p) { p.style.fill = ''; });
        var b = g.querySelector(':scope > path.node-border');
        if (b) { b.style.stroke = ''; }
      });
      this.touched = [];
    },
    paint: function (name, fill, text, border) {
      var g = document.getElementById('node-name-' + name);
      if (!g) { return false; }
      g.querySelectorAll('.node-item-type > path').forEach(function (p) { p.style.fill = fill; });
      g.querySelectorAll('.node-item-type > text').forEach(function (t) { t.style.fill = text; });
      var b = g.querySelector(':scope > path.node-border');
      if (b) { b.style.stroke = border; }
      this.touched.push(g);
      return true;
    },
    heat: function (fills, selColor) {
      // fills: node name -> [fill, text, border] (per-op profile time)
      this.style(selColor);
      this.clear();
      var n = 0;
      for (var name in fills) { if (this.paint(name, fills[name][0], fills[name][1], fills[name][2])) { n++; } }
      return n;
    },
    apply: function (verdicts, colors, dynamic, dynColor, selColor) {
      var n = 0;
      this.style(selColor);
      this.clear();
      for (var name in verdicts) {
        var c = colors[verdicts[name]] || colors.unknown;
        if (this.paint(name, c[0], c[3], c[2])) { n++; }
      }
      document.querySelectorAll('path.edge-path.studio-dynamic').forEach(function (p) {
        p.classList.remove('studio-dynamic'); p.style.stroke = ''; p.style.strokeWidth = '';
      });
      (dynamic || []).forEach(function (t) {
        document.querySelectorAll('[id="edge-' + CSS.escape(t) + '"]').forEach(function (p) {
          p.classList.add('studio-dynamic'); p.style.stroke = dynColor; p.style.strokeWidth = '2px';
        });
      });
      return n;
    },
    select: function (name) {
      if (this.selected) { this.selected.classList.remove('select'); this.selected = null; }
      var g = document.getElementById('node-name-' + name);
      if (!g) { return false; }
      g.classList.add('select');
      this.selected = g;
      var container = document.getElementById('target');
      var r = g.getBoundingClientRect();
      if (container) {
        var b = container.getBoundingClientRect();
        container.scrollTo({left: container.scrollLeft + r.left + r.width / 2 - b.left - b.width / 2,
                            top: container.scrollTop + r.top + r.height / 2 - b.top - b.height / 2,
                            behavior: 'auto'});
      } else {
        g.scrollIntoView({block: 'center', inline: 'center'});
      }
      return true;
    }
  };
})();
"""


def _stop_address(address: tuple[str, int] | None) -> None:
    if address is None:
        return
    try:
        import netron

        netron.stop(address)
    except Exception:  # already stopped, or netron gone at interpreter exit
        pass


def prepare_environment() -> None:
    """Chromium flags must be in the environment before QtWebEngine starts (no sandbox as root, no GPU)."""
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "").split()
    for f in CHROMIUM_FLAGS:
        if f not in flags:
            flags.append(f)
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = " ".join(flags)


def webengine_problem() -> str | None:
    """Why QtWebEngine cannot be used here, or None."""
    try:
        prepare_environment()
        import PySide6.QtWebEngineCore  # noqa: F401
        import PySide6.QtWebEngineWidgets  # noqa: F401
    except Exception as exc:  # ImportError, or a missing system library reported as OSError
        return QCoreApplication.translate("NetronView", "QtWebEngine is not available: {error}").format(
            error=f"{type(exc).__name__}: {exc}")
    try:
        import netron  # noqa: F401
    except ImportError:
        return QCoreApplication.translate("NetronView", "the netron package is not installed ({command})").format(
            command="pip install 'deployment-studio[gui]'")
    return None


class NetronView(QWidget):
    """Netron for one model file; ``set_verdicts`` / ``select`` work before or after it has rendered."""

    sig_node_clicked = Signal(str)
    sig_ready = Signal(float)  # seconds from load() to the first rendered nodes
    sig_failed = Signal(str)

    def __init__(self, theme: str = "light", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = theme
        self.address: tuple[str, int] | None = None
        self.path: Path | None = None
        self.is_ready = False
        self.problem: str | None = None
        self._verdicts: dict[str, str] = {}
        self._dynamic: list[str] = []
        self._heat: dict[str, float] | None = None
        self._selected: str | None = None
        self._t0 = 0.0
        self.web: Any = None
        self.message = QLabel(self.tr("Netron shows the model here once one is open."))
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setProperty("role", "muted")
        self._stack = QStackedLayout()
        holder = QWidget()
        holder.setLayout(self._stack)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(holder)
        self._stack.addWidget(self.message)
        self._poll = QTimer(self)
        self._poll.setInterval(150)
        self._poll.timeout.connect(self._check_ready)
        self.problem = webengine_problem()
        if self.problem is None:
            try:
                self._create_web()
            except Exception as exc:  # a broken WebEngine install: keep the page alive and say so
                self.problem = self.tr("QtWebEngine could not start: {error}").format(error=f"{type(exc).__name__}: {exc}")
        if self.problem:
            self.message.setText(self.tr("The Netron tab is unavailable.\n{problem}\n\n"
                                         "The native graph view has the same verdicts, selection and search.").format(problem=self.problem))
        box = self._address_box = [None]  # read by the destroyed handler, which must not touch self
        self.destroyed.connect(lambda *_a, b=box: _stop_address(b[0]))

    # ---- web view --------------------------------------------------------------------------------------
    def _create_web(self) -> None:
        from PySide6.QtWebEngineCore import (
            QWebEnginePage,
            QWebEngineProfile,
            QWebEngineScript,
            QWebEngineUrlRequestInterceptor,
        )
        from PySide6.QtWebEngineWidgets import QWebEngineView

        view_ref = self

        class LoopbackOnly(QWebEngineUrlRequestInterceptor):
            """Netron would call ipinfo.io and Google Analytics: nothing but our loopback server is allowed."""

            def interceptRequest(self, info: Any) -> None:
                url = info.requestUrl()
                if url.scheme() in ("data", "blob"):
                    return
                if url.host() not in ("127.0.0.1", "localhost"):
                    info.block(True)

        class Page(QWebEnginePage):
            def javaScriptConsoleMessage(self, level: Any, message: str, line: int, source: str) -> None:
                if message.startswith(SELECT_PREFIX):
                    view_ref.sig_node_clicked.emit(message[len(SELECT_PREFIX):])

        # the view (and with it the page) must be deleted before the profile: create it first, since Qt
        # deletes children in creation order
        self.web = QWebEngineView(self)
        self._profile = QWebEngineProfile(self)  # off the record: no cookies or cache written to disk
        self._interceptor = LoopbackOnly(self)
        self._profile.setUrlRequestInterceptor(self._interceptor)
        script = QWebEngineScript()
        script.setName("studio-netron")
        script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
        script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld)
        script.setRunsOnSubFrames(False)
        from studio.gui.fonts import css_font_family

        script.setSourceCode(_BOOT_JS.replace("__STUDIO_FONTS__", json.dumps(css_font_family())))
        self._profile.scripts().insert(script)
        self._page = Page(self._profile, self.web)
        self.web.setPage(self._page)
        self.web.loadFinished.connect(self._on_load_finished)
        self._page.renderProcessTerminated.connect(self._on_render_crash)
        self._stack.addWidget(self.web)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def load(self, path: Path | str) -> None:
        """Serve ``path`` on a free loopback port and show it (restarts the server for a new file)."""
        self.path = Path(path)
        self.is_ready = False
        if self.problem or self.web is None:
            return
        import netron

        self.stop_server()
        try:
            self.address = tuple(netron.serve(str(self.path), None, ("127.0.0.1", 0)))  # type: ignore[assignment]
            self._address_box[0] = self.address
        except Exception as exc:  # the server failing to bind must not take the page down
            self._fail(self.tr("could not start the Netron server: {error}").format(error=f"{type(exc).__name__}: {exc}"))
            return
        self.message.setText(self.tr("Netron is laying out {name}…").format(name=self.path.name))
        self._stack.setCurrentWidget(self.message)
        self._t0 = time.perf_counter()
        self.web.load(QUrl(self.url))
        self._poll.start()

    @property
    def url(self) -> str:
        return f"http://{self.address[0]}:{self.address[1]}/" if self.address else ""

    def stop_server(self) -> None:
        _stop_address(self.address)
        self.address = None
        self._address_box[0] = None

    def _on_load_finished(self, ok: bool) -> None:
        if not ok and self.address is not None:
            self._fail(self.tr("Netron did not load from {url}").format(url=self.url))

    def _on_render_crash(self, status: Any, code: int) -> None:
        self._fail(self.tr("the QtWebEngine render process stopped ({status}, code {code})").format(
            status=getattr(status, "name", status), code=code))

    def _fail(self, why: str) -> None:
        self._poll.stop()
        self.problem = why
        self.message.setText(self.tr("The Netron tab is unavailable.\n{why}").format(why=why))
        self._stack.setCurrentWidget(self.message)
        self.sig_failed.emit(why)

    def _check_ready(self) -> None:
        if self.web is None or self._page is None:
            return
        self._page.runJavaScript("window.__studio ? window.__studio.ready() : 0", 0, self._on_ready_count)

    def _on_ready_count(self, count: Any) -> None:
        if self.is_ready or not isinstance(count, (int, float)) or count <= 0:
            return
        self.is_ready = True
        self._poll.stop()
        self._stack.setCurrentWidget(self.web)
        self._push_colours()
        if self._selected:
            self.select(self._selected)
        self.sig_ready.emit(time.perf_counter() - self._t0)

    # ---- colours and selection -------------------------------------------------------------------------
    def set_verdicts(self, verdicts: dict[str, str], dynamic: set[str] | None = None) -> None:
        self._verdicts = dict(verdicts)
        self._dynamic = sorted(dynamic or ())
        if self.is_ready and self._page is not None and self._heat is None:
            self._push_colours()

    def set_heat(self, values: dict[str, float] | None) -> None:
        """Colour nodes by a per-node number (profiled time share) with the graph view's ramp, scaled to the
        largest value; nodes without a value get the neutral colour. None goes back to verdict colours."""
        self._heat = dict(values) if values else None
        if self.is_ready and self._page is not None:
            self._push_colours()

    def heat_fills(self) -> dict[str, list[str]]:
        """Node name -> [fill, text, border] for the current heat values (what ``set_heat`` paints)."""
        if not self._heat:
            return {}
        ramp = palette.heat_ramp(10)
        top = max((float(v) for v in self._heat.values()), default=0.0) or 1.0
        none = palette.verdict_colors(self._theme)["none"]
        out: dict[str, list[str]] = {}
        for name, v in self._heat.items():
            frac = max(0.0, float(v)) / top
            if frac <= 0:
                out[name] = [none[1], palette.TEXT[self._theme][1], none[2]]
                continue
            fill = ramp[min(9, int(frac * 9.999))]
            r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
            text = "#1f2328" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"
            out[name] = [fill, text, "#5b6470"]
        return out

    def _push_colours(self) -> None:
        if self._heat is not None:
            js = (f"window.__studio.heat({json.dumps(self.heat_fills())}, "
                  f"{json.dumps(palette.SELECTION[self._theme])})")
            self._page.runJavaScript(js, 0)
            return
        colors = {}
        for v, (solid, _fill, border) in palette.verdict_colors(self._theme).items():
            colors[v] = [solid, _fill, border, "#ffffff"]
        js = (f"window.__studio.apply({json.dumps(self._verdicts)}, {json.dumps(colors)}, "
              f"{json.dumps(self._dynamic)}, {json.dumps(palette.DYNAMIC[self._theme])}, "
              f"{json.dumps(palette.SELECTION[self._theme])})")
        self._page.runJavaScript(js, 0)

    def select(self, name: str | None) -> None:
        self._selected = name
        if self.is_ready and name and self._page is not None:
            self._page.runJavaScript(f"window.__studio.select({json.dumps(name)})", 0)

    def run_js(self, code: str, callback: Any) -> None:
        """For tests and tools: evaluate ``code`` in the page and pass the result to ``callback``."""
        self._page.runJavaScript(code, 0, callback)

    def closeEvent(self, event: Any) -> None:
        self.stop_server()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the server and delete the page before its profile (Qt warns when the order is reversed)."""
        self._poll.stop()
        self.stop_server()
        if self.web is not None:
            import shiboken6

            page, self._page = self._page, None
            self.web.setPage(None)
            if page is not None and shiboken6.isValid(page):
                shiboken6.delete(page)
            self.web = None
            self.is_ready = False
