"""studio.gui"""
