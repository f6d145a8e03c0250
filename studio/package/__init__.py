"""studio.package"""
