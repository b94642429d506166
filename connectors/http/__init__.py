"""HTTP plumbing shared by every connector: the one retry policy, Retry-After, secrets."""
