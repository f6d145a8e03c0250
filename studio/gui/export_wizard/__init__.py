"""The steps of the export wizard (studio.gui.pages.export_page): source, signature, options, run, result."""
