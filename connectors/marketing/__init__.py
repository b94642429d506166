"""The Marketing Automation Data API: its published shapes (routes, batch sizes, items, the
listing language) and, later, its client."""
