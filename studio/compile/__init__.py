"""studio.compile"""
