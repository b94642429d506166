"""Extraction speed of every platform's connector from its fake, at a realistic rate budget.

Runs ``bench/extract_<platform>.py`` for each platform (each starts its own fake with the
platform's budget and prints records/s and the share of the budget used), one after the
other so they do not compete for the machine's two cores.

    python bench/extract.py [--orders 20000] [--only shopify magento ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    scripts = sorted(HERE.glob("extract_*.py"))
    names = [s.stem.removeprefix("extract_") for s in scripts]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=20_000)
    parser.add_argument("--only", nargs="+", choices=names, default=names)
    args = parser.parse_args()
    failed = []
    for script, name in zip(scripts, names, strict=True):
        if name not in args.only:
            continue
        print(f"== {name}", flush=True)
        done = subprocess.run([sys.executable, str(script), "--orders", str(args.orders)],
                              check=False)
        if done.returncode:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
