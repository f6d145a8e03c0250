"""The documentation site (docs/, mkdocs.yml) and the README: it builds without a warning, every internal link and
anchor resolves, the generated CLI reference covers every subcommand and flag, the agent API page every route,
the user guide every page of the window, and the README stays short."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GENERATED = ("reference/cli.md", "benchmarks.md")  # made by tools/mkdocs_hooks.py at build time
SKIP_SCHEMES = ("http://", "https://", "mailto:")


# -------------------------------------------------------------------------------- helpers


def _generated(rel: str) -> str:
    if rel == "reference/cli.md":
        from studio.cli.docs import cli_reference

        return cli_reference()
    return (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")


def _without_code(text: str) -> str:
    """The text less fenced blocks and inline code spans (a link-like string inside code is not a link)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slugify(heading: str) -> str:
    """Python-Markdown's toc slug of a heading's text (code spans and links reduced to their text)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> set[str]:
    """The heading ids of a page: ``{ #id }`` when given (attr_list), else the slug, made unique as toc does."""
    out: set[str] = set()
    body = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*$", body, flags=re.M):
        title = m.group(1)
        given = re.search(r"\{\s*#([\w-]+)\s*\}\s*$", title)
        ident = given.group(1) if given else slugify(title)
        base, n = ident, 0
        while ident in out:
            n += 1
            ident = f"{base}_{n}"
        out.add(ident)
    return out


def _pages() -> dict[Path, str]:
    pages = {p: p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}
    pages[README] = README.read_text(encoding="utf-8")
    return pages


def _links(text: str) -> list[str]:
    plain = re.sub(r"\\[\\`*_{}\[\]()#+\-.!<>|]", "", _without_code(text))  # escaped characters are literal text
    return re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", plain)


def _target_text(path: Path) -> str | None:
    """A linked page's Markdown: a file, or a page the build generates; None when there is no such page."""
    try:
        rel = path.relative_to(DOCS).as_posix()
    except ValueError:
        rel = None
    if rel in GENERATED:
        return _generated(rel)
    if path.is_file():
        return path.read_text(encoding="utf-8") if path.suffix == ".md" else ""
    return None


# -------------------------------------------------------------------------------- the build


def test_mkdocs_builds_strict_without_warnings(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it is in the dev extra: pip install -c packaging/constraints.txt "
                    "'.[dev]'); the link checks below still run")
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                        str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "WARNING" not in log, log
    for page in ("index.html", "reference/cli/index.html", "api/index.html", "troubleshooting/index.html",
                 "guide/inspect/index.html", "benchmarks/index.html", "architecture/index.html"):
        assert (site / page).is_file(), page
    cli = (site / "reference/cli/index.html").read_text(encoding="utf-8")
    assert 'id="studio_triton_build-repo"' in cli and "--split-modalities" in cli


def test_generated_pages_are_not_files_in_docs() -> None:
    for rel in GENERATED:
        assert not (DOCS / rel).exists(), f"docs/{rel} is made by tools/mkdocs_hooks.py; a file there would shadow it"


# -------------------------------------------------------------------------------- links


def test_every_internal_link_and_anchor_resolves() -> None:
    bad = []
    for page, text in _pages().items():
        here = anchors(text)
        for link in _links(text):
            if link.startswith(SKIP_SCHEMES):
                continue
            target, _, anchor = link.partition("#")
            if not target:  # same page
                if anchor not in here:
                    bad.append(f"{page.relative_to(ROOT)}: #{anchor} is no heading of this page")
                continue
            if target.startswith("/"):
                bad.append(f"{page.relative_to(ROOT)}: {link} is absolute; use a relative link")
                continue
            path = (page.parent / target).resolve()
            content = _target_text(path)
            if content is None:
                bad.append(f"{page.relative_to(ROOT)}: {link} -> {target} does not exist")
            elif anchor and anchor not in anchors(content):
                bad.append(f"{page.relative_to(ROOT)}: {link} -> no heading #{anchor} in {target}")
    assert not bad, "\n".join(bad)


def test_the_link_checker_sees_broken_links() -> None:
    """The checker itself: a wrong anchor and a missing page are found (a checker that finds nothing passes)."""
    text = "# Title `x`\n\n## Model diff (`studio diff`) and more\n\n[a](#title-x) [b](missing.md) [c](#nope)\n"
    assert anchors(text) == {"title-x", "model-diff-studio-diff-and-more"}
    assert _links(text) == ["#title-x", "missing.md", "#nope"]
    assert _links("```\n[x](in-code.md)\n```\n`[y](span.md)`") == []
    assert anchors("## a\n## a\n## b { #custom }\n") == {"a", "a_1", "custom"}


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, flags=re.M))
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} | set(GENERATED)
    assert on_disk - listed == set(), "pages missing from mkdocs.yml's nav"
    assert listed - on_disk == set(), "nav entries without a page"


# -------------------------------------------------------------------------------- the CLI reference


def _sections(markdown: str) -> dict[str, str]:
    """Command name -> its section of the reference (the text up to the next command heading)."""
    parts = re.split(r"^#{2,4} (.+?) \{ #[\w-]+ \}\s*$", markdown, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _walk(name: str, parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child, sub in action.choices.items():
                out += _walk(f"{name} {child}", sub)
    return out


def _expected() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser a user can reach, built here the way the programs build them (not through studio.cli.docs)."""
    from studio.agent.cli import build_parser
    from studio.cli import main as cli
    from studio.cli.triton_cmd import serve_alias_parser

    out = []
    for name in cli.COMMANDS:
        if cli._available(name):
            out += _walk(f"studio {name}", cli.build_command_parser(name)[0])
    out += _walk("multimodal-export", cli.build_command_parser("export", prog="multimodal-export")[0])
    out += _walk("multimodal-serve", serve_alias_parser())
    out += _walk("studio-agent", build_parser())
    return out


def test_cli_reference_lists_every_subcommand_and_flag() -> None:
    from studio.cli.docs import cli_reference

    sections = _sections(cli_reference())
    missing = []
    for name, parser in _expected():
        if name not in sections:
            missing.append(f"no section for `{name}`")
            continue
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices:
                    if f"`{child}`" not in sections[name]:
                        missing.append(f"`{name}` does not list its subcommand {child}")
                continue
            words = action.option_strings or [action.metavar or action.dest]
            for word in words:
                if word not in sections[name]:
                    missing.append(f"`{name}` does not list {word}")
    assert not missing, "\n".join(missing)


def test_cli_reference_matches_studio_help(capsys: pytest.CaptureFixture[str]) -> None:
    """What `studio --help` prints (commands and top-level flags) is in the reference, plugin commands aside."""
    from studio.cli import main as cli
    from studio.cli.docs import cli_reference

    with pytest.raises(SystemExit):
        cli.main(["--help"])
    helptext = capsys.readouterr().out
    plugin = set(cli.plugin_commands())
    listed = set(re.findall(r"^ {4}(\S+)", helptext, flags=re.M)) - plugin
    assert listed >= {"export", "inspect", "gui", "completion"}, helptext
    sections = _sections(cli_reference())
    assert {f"studio {c}" for c in listed} <= set(sections), listed
    for flag in re.findall(r"^\s+(-[-\w]+)", helptext, flags=re.M):
        assert flag in sections["studio"], flag


def test_cli_reference_is_the_same_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No terminal width or home folder leaks into the page (it would differ between two builds)."""
    from studio.cli.docs import cli_reference

    monkeypatch.setenv("COLUMNS", "300")
    wide = cli_reference()
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cli_reference() == wide
    assert str(tmp_path) not in wide


# -------------------------------------------------------------------------------- the agent's API


def test_agent_api_page_lists_every_route() -> None:
    """Every row of the agent's endpoint table (studio.agent.endpoints: the HTTP app and the fast path route
    from it) and every gRPC RPC of its servicer is on the API page."""
    from studio.agent.endpoints import ENDPOINTS

    api = (DOCS / "api.md").read_text(encoding="utf-8")
    routes = [(ep.method, path) for ep in ENDPOINTS for path in ep.paths]
    assert len(routes) >= 20, routes
    for method, path in routes:
        assert f"`{method} {path}`" in api, f"{method} {path}"
    grpc = ast.parse((ROOT / "studio/agent/grpc_server.py").read_text(encoding="utf-8"))
    servicer = next(n for n in grpc.body if isinstance(n, ast.ClassDef) and n.name == "InferenceServicer")
    rpcs = [f.name for f in servicer.body if isinstance(f, ast.FunctionDef) and f.name[:1].isupper()]
    assert len(rpcs) >= 8, rpcs
    assert set(rpcs) == {ep.grpc for ep in ENDPOINTS if ep.grpc}, "a gRPC RPC without its row in the table"
    for rpc in rpcs:
        assert f"`{rpc}`" in api, rpc


# -------------------------------------------------------------------------------- the user guide


def _page_ids() -> list[str]:
    """The page ids of the built-in pages (``page_id = "..."`` of each PAGE_SPECS module), read without Qt."""
    from studio.gui.pages import PAGE_SPECS, module_exists

    ids = []
    for module, class_name in PAGE_SPECS:
        if not module_exists(module):
            continue
        spec = importlib.util.find_spec(module)
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == "page_id" for t in stmt.targets):
                        ids.append(stmt.value.value)  # type: ignore[attr-defined]
    return ids


def test_every_page_of_the_window_has_a_guide_and_a_screenshot() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import docs_screenshots
    finally:
        sys.path.remove(str(ROOT / "tools"))
    ids = _page_ids()
    assert len(ids) >= 9, ids
    for page_id in ids:
        guide = DOCS / "guide" / f"{page_id}.md"
        assert guide.is_file(), f"no user guide page for the {page_id} page"
        assert f"../images/{page_id}.png" in guide.read_text(encoding="utf-8"), page_id
        assert (DOCS / "images" / f"{page_id}.png").is_file(), page_id
        assert page_id in docs_screenshots.PAGES, page_id


def test_images_stay_small() -> None:
    total = sum(p.stat().st_size for p in (DOCS / "images").iterdir())
    assert total < 3 * 1024 * 1024, f"docs/images holds {total / 2**20:.1f} MB; keep it under 3 MB"


# -------------------------------------------------------------------------------- the README


def test_readme_is_short_and_points_into_the_docs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 150
    for needed in ("make run", "make test", "docs/images/", "docs/install.md", "docs/troubleshooting.md",
                   "docs/api.md", "docs/guide/export.md"):
        assert needed in text, needed


def test_cli_docs_module_writes_the_page(tmp_path: Path) -> None:
    """`python -m studio.cli.docs OUT.md` writes the page the site shows (and a bad folder is a clear error)."""
    from studio.cli.docs import cli_reference, main

    out = tmp_path / "cli.md"
    assert main([str(out)]) == 0
    assert out.read_text(encoding="utf-8") == cli_reference()
    r = subprocess.run([sys.executable, "-m", "studio.cli.docs", str(tmp_path / "no" / "such" / "cli.md")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert r.returncode == 2, r.stderr
    assert "error:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_coverage_diagnosis_is_table_text_not_markup() -> None:
    """Code in a diagnosis (``proj[i](features[i])``, ``<image>``) would read as a link or HTML in docs/coverage.md and
    fail the strict build (seen after the sixth session's full run)."""
    from bench.coverage import _cell

    row = {"built": True, "status": "failed", "diagnosis": {"stage": "export", "error_class": "exporter_error",
           "message": "at m.py:1: self.proj[i](features[i]) with <image> *tokens*", "fix": "see `x`"}}
    cell = _cell(row)
    assert _links(cell) == [] and "<image>" not in cell
    assert r"self.proj\[i\](features\[i\]) with \<image\> \*tokens\*" in cell and r"see \`x\`" in cell
