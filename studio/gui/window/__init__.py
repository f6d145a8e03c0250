"""Pieces of the main window kept out of main_window.py: the context toolbar, menus, search, window state."""
