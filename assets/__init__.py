"""Dagster assets built from the configuration: one per (source, target resource)."""
