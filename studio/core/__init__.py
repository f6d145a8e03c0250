"""Headless core: jobs, errors, settings, workspace, plugins. Never imports Qt or torch."""
