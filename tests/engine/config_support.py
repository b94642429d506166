"""What the configuration tests share: a good shops.yaml, a source that defines its
streams, writing a file to load, and a port nothing listens on.
"""

from __future__ import annotations

import socket
import textwrap

GOOD = """
destination:
  base_url: https://api.example.com/v1
  api_key_env: MARKETING_API_KEY
state_url: sqlite:///state.db
sources:
  - name: eu_shop
    platform: woocommerce
    connection: {url: https://shop.example.com, key_env: WC_KEY, secret_env: WC_SECRET}
    data_source: {label: WooCommerce EU}
    resources: [orders, customers]
    schedule: "*/10 * * * *"
    history_start: 2024-06-01
    mapping:
      customers: {set: {is_opt_in: true}, rename: {phone_number: billing.phone}}
"""


#: a source whose configuration defines its streams: customers and orders, no others
DEFINED = """
sources:
  - name: own
    platform: {platform}
    connection:
      {where}
      streams:
        customers: {{{table}key: id, columns: {{customer_id: id, email: email}}}}
        orders: {{{table}key: id, columns: {{order_id: id}}}}
"""
WHERE = {"sql": ("url: sqlite:////data/shop.db", "table: t, "),
         "files": ("path: /data/drop", "")}


def defined(platform: str, resources: str | None = None) -> str:
    where, table = WHERE[platform]
    text = DEFINED.format(platform=platform, where=where, table=table)
    return text if resources is None else text + f"    resources: {resources}\n"


def write(tmp_path, text):
    path = tmp_path / "shops.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
