"""The sandbox's endpoints, one module per area of the API."""
