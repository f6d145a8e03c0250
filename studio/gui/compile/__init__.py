"""Pieces of the Compile page: the report view (artifacts, parity, failure, per-layer error) and backends."""
