"""Desktop integration: the .desktop entry, icon, MIME type, paths handed to the window, one instance per workspace."""
