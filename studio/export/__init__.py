"""studio.export"""
