"""studio.triton"""
