"""Fake shop platforms: local servers that answer like the real platforms' APIs, with
generated, deterministic data of any size and switches for the faults real shops show."""
