"""The README's first command: the demo runs the whole sync on embedded defaults."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.timeout(300)  # three processes and a Dagster run: allow for a crowded machine
def test_the_demo_syncs_everything_and_shows_it_visible():
    done = subprocess.run([sys.executable, "-m", "pipelines.cli", "demo", "--json"],
                          capture_output=True, check=False, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    resources = summary["resources"]

    assert summary["success"] is True
    assert {"orders", "customers", "products", "categories", "vouchers", "statuses"} <= set(resources)
    for name, row in resources.items():
        assert row["extracted"] == row["accepted"] + row["quarantined"] + row["rejected"], name
        assert row["visible"] == row["accepted"], name
    assert resources["orders"]["accepted"] > 0
    assert resources["customers"]["quarantined"] == 1  # the shop's customer with a bad email
