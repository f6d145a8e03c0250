"""Manifest of the TVM compile plugin: registered through the `studio.plugins` entry-point group.

It declares ``requires: ["tvm"]`` so `studio plugins` and the Plugins view show it unavailable, with the
install hint, when apache-tvm is absent; nothing here imports TVM. The command and the page work without TVM
(they say what is missing), so they point at their own modules; the agent's runtime needs TVM itself.
"""

from __future__ import annotations


def manifest() -> dict:
    from studio.compile.targets import GENERIC
    from studio.core.errors import InstallError
    from studio.package.boards import board_ids

    try:
        boards = list(board_ids())  # file names only: no YAML is read here
    except InstallError:  # a broken install: `studio plugins` and the commands say so themselves
        boards = []

    return {"name": "tvm-compile",
            "description": "Compile ONNX with TVM Relax for edge CPUs and GPUs (apache-tvm); LLM parts with "
                           "mlc_llm when installed. Without apache-tvm: python3 -m pip install "
                           "'deployment-studio[compile]'",
            "provides": {"compilers": {"tvm-relax": {"object": "studio.compile.pipeline:run_compile",
                                                     "help": "studio compile --backend tvm (the default)"},
                                       "mlc-llm": {"object": "studio.compile.mlc:run_llm",
                                                   "help": "studio compile --mlc-llm HF_DIR"}},
                         "compile_targets": list(GENERIC) + boards,  # TVM target ids, not inspector profiles
                         "runtimes": {"tvm": {"object": "studio.agent.tvm_backend:load_tvm_model",
                                              # without apache-tvm: the exact version and pip line to install
                                              "missing": "studio.agent.tvm_backend:require_runtime",
                                              "help": "the edge agent serves compiled TVM modules"}},
                         "cli": {"compile": {"module": "studio.cli.compile_cmd",
                                             "help": "compile ONNX with TVM Relax for an edge target"}},
                         "pages": {"compile": {"module": "studio.gui.pages.compile_page", "class": "CompilePage",
                                               "title": "Compile"}}},
            "module": "studio.compile.api",
            "requires": ["tvm"],
            "hint": "install apache-tvm: python3 -m pip install 'deployment-studio[compile]'"}
