"""studio.optimize"""
