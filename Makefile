# Deployment Studio: `make run` opens the studio on its demo workspace, `make test` runs the whole suite.
# Both create .venv and install the project into it first (re-installed when pyproject.toml changes).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO ?= $(HOME)/.local/share/deployment-studio/demo-workspace
PYTEST_ARGS ?=
# Pinned versions that install together (pip would otherwise backtrack through GB-sized wheels).
CONSTRAINTS ?= packaging/constraints.txt
# The GUI's translation catalogues and the .qm files built from them (`make translations`)
TS := $(wildcard studio/gui/translations/studio_*.ts)
QM := $(TS:.ts=.qm)

.PHONY: run test test-core bench lint venv clean cross-toolchain desktop-deps rknn-env bytecode icons docs docs-screenshots \
  translations

$(STAMP): pyproject.toml $(CONSTRAINTS) plugins/studio-openvino/pyproject.toml plugins/studio-rknn/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip setuptools wheel
	$(PY) -m pip install -c $(CONSTRAINTS) -e '.[dev]'
	# the OpenVINO verifier plugin (pulls openvino, ~60 MB); the rknn one makes its own env on first use
	$(PY) -m pip install -c $(CONSTRAINTS) -e plugins/studio-openvino
	# the rknn verifier plugin itself is small: its toolkit env (1.3 GiB) is `make rknn-env`, outside the clone
	$(PY) -m pip install -c $(CONSTRAINTS) -e plugins/studio-rknn
	touch $(STAMP)

venv: $(STAMP) $(QM)

# The GUI's translations (studio.gui.i18n): `make translations` collects every tr()/translate() string of
# studio/gui into the .ts catalogues (new ones come in unfinished: translate them, tests/gui/test_i18n.py refuses
# unfinished entries) and builds the .qm files the studio loads; run, test and venv build the .qm only.
studio/gui/translations/%.qm: studio/gui/translations/%.ts | $(STAMP)
	$(VENV)/bin/pyside6-lrelease -silent $< -qm $@

translations: $(STAMP)
	$(VENV)/bin/pyside6-lupdate -no-obsolete -locations none $$(find studio/gui -name '*.py' | sort) -ts $(TS)
	for ts in $(TS); do $(VENV)/bin/pyside6-lrelease -silent $$ts -qm $${ts%.ts}.qm || exit 1; done

# Bytecode of the studio's own modules: an editable install writes none, and where PYTHONDONTWRITEBYTECODE is
# set (CI images, this machine) every CLI start would compile ~40 modules again (0.15 s per `studio inspect`).
# compileall skips what is up to date.
bytecode: $(STAMP)
	@$(PY) -m compileall -q -j 0 studio plugins >/dev/null || true

# Qt's xcb platform needs system libraries a fresh desktop may lack: installed here as root with apt,
# otherwise the check prints the apt-get line and stops with exit 2 (never a Qt abort).
run: $(STAMP) bytecode $(QM)
	$(PY) -m studio.gui.platform_check --install --quiet
	$(PY) -m studio.gui --demo $(DEMO)

test: $(STAMP) bytecode $(QM)
	-@$(MAKE) --no-print-directory cross-toolchain desktop-deps rknn-env
	@rm -f test-artifacts/last-test.txt
	# pytest's own exit codes are below 128; a signal (134 abort, 139 segfault) names the test it died in
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest $(PYTEST_ARGS) || { rc=$$?; \
	  [ $$rc -lt 128 ] || echo "pytest died (exit $$rc) in: $$(cat test-artifacts/last-test.txt 2>/dev/null)"; \
	  exit $$rc; }

# The headless core's tests in a process where PySide6 and torch cannot be imported.
test-core: $(STAMP)
	$(PY) -m pytest tests/core $(PYTEST_ARGS)

bench: $(STAMP) bytecode
	$(PY) -m bench.run_all

# The PNG sizes of the icon, rendered from studio/resources/desktop/deployment-studio.svg (tests/gui/test_icons.py).
icons: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m studio.desktop.icons

# ruff, then the import contracts of pyproject.toml's [tool.importlinter] (the layers, no circles, Qt and torch kept
# out); --no-cache: its cache once answered from files edited since (1 s to build the graph afresh)
lint: $(STAMP)
	$(PY) -m ruff check studio plugins tests bench tools
	PYTHONPATH=.$${PYTHONPATH:+:$$PYTHONPATH} $(VENV)/bin/lint-imports --no-logo --no-cache

# The documentation site (docs/, mkdocs.yml) into site/; --strict: a warning (broken link or anchor) fails it.
# The CLI reference and the benchmarks page are made during the build (tools/mkdocs_hooks.py).
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

# The user guide's screenshots, docs/images/PAGE.png, from `studio gui --screenshot` on a fresh demo workspace.
docs-screenshots: $(STAMP)
	$(PY) tools/docs_screenshots.py --out docs/images

# Debian's aarch64 cross compiler links TVM's cross-built objects into a board .so (studio compile --target aarch64).
# Best effort: without it (not root, no apt) the tests of the .so step skip with a reason; the .tar path still runs.
cross-toolchain:
	@command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      gcc-aarch64-linux-gnu libc6-dev-arm64-cross) >/dev/null || echo "cross-toolchain: apt-get failed"; \
	  else echo "cross-toolchain: not root or no apt-get; aarch64 .so tests will skip"; fi; }

# Xvfb, openbox and Qt's xcb libraries for the tests that open a real X window (window fits the screen); zsh and
# bash-completion for the shell completion tests; desktop-file-utils, xdg-utils and shared-mime-info for the
# desktop entry / MIME tests (libfile-mimeinfo-perl: xdg-mime's filetype query and xdg-open). Best effort like the cross toolchain: without them those tests skip with a reason.
desktop-deps:
	@command -v Xvfb >/dev/null 2>&1 && command -v openbox >/dev/null 2>&1 && command -v xdotool >/dev/null 2>&1 \
	  && command -v zsh >/dev/null 2>&1 && command -v tmux >/dev/null 2>&1 && [ -f /usr/share/bash-completion/bash_completion ] \
	  && command -v desktop-file-validate >/dev/null 2>&1 && command -v xdg-mime >/dev/null 2>&1 \
	  && command -v update-mime-database >/dev/null 2>&1 && command -v mimetype >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      xvfb openbox x11-utils xdotool zsh tmux bash-completion desktop-file-utils xdg-utils shared-mime-info libfile-mimeinfo-perl) \
	      >/dev/null || echo "desktop-deps: apt-get failed"; \
	  else echo "desktop-deps: not root or no apt-get; real-display, shell and desktop-entry tests will skip"; fi; }
	-@QT_QPA_PLATFORM=xcb $(PY) -m studio.gui.platform_check --install --quiet

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info site

# rknn-toolkit2 2.5.0 in its own venv (~/.cache/deployment-studio/rknn-2.5.0, STUDIO_RKNN_ENV overrides):
# about 80 s and 1.3 GiB the first time, then cached; best-effort (the rknn tests skip with the reason without it)
rknn-env: $(STAMP)
	@$(VENV)/bin/studio-rknn-env check >/dev/null 2>&1 || $(VENV)/bin/studio-rknn-env create \
	  || echo "rknn-env: could not create the rknn-toolkit2 environment; rknn tests will skip"
