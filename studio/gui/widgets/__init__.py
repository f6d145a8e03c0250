"""Reusable widgets of the studio's pages."""
