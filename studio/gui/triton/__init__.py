"""The Triton page's widget modules: the build form, the repository tree and file viewer, the check findings
and the local server panel. The page (studio.gui.pages.triton_page) wires them to jobs and the shared state."""
