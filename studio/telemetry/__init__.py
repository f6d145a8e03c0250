"""studio.telemetry"""
