"""studio.inspect"""
