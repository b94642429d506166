"""Contacts: the service's unified profile, one per email, derived from pushed customers.

Contacts are never written through the API. When a customer is applied, the contact of its
email is made or refreshed; a change of email opt-in is written to the consent history; when
the last customer with an email goes, so does its contact.
"""

from __future__ import annotations

from sandbox.marketing.store import Doc, Shop, now_iso


def derive_contact(shop: Shop, customer: Doc) -> None:
    contacts = shop.collection("contacts")
    email = customer["email"].lower()
    now = now_iso()
    contact = contacts.get(email) or {
        "id_shop_contact": shop.next_id("contacts"),
        "created_at": now,
    }
    opt_in = bool(customer.get("is_opt_in"))
    active = bool(customer.get("is_active"))
    if contact.get("optin_data_email") != opt_in:
        _record_consent(shop, contact["id_shop_contact"], customer["email"], opt_in, now)
    contact.update(
        id_customer_shop=customer["customer_id"],
        id_shop_customer=customer["id"],
        contact_data_email=customer["email"],
        contact_data_sms=customer.get("phone_number"),
        contact_first_name=customer.get("first_name"),
        contact_last_name=customer.get("last_name"),
        contact_birthday=customer.get("birth_date"),
        contact_lang=customer.get("lang"),
        optin_data_email=opt_in,
        optin_data_sms=False,
        can_receive_email=opt_in and active,
        can_receive_sms=bool(customer.get("phone_number")) and active,
        can_receive_push=False,
        is_registered=True,
        is_billable=active,
        do_not_charge=False,
        active=active,
        created_on_shop_at=customer.get("created_at"),
        updated_at=now,
    )
    contacts.put(email, contact)


def forget_contact(shop: Shop, email: str) -> None:
    """Drop the contact of ``email`` once no customer carries that email any more."""
    email = email.lower()
    customers = shop.collection("customers").docs.values()
    if not any(c["email"].lower() == email for c in customers):
        shop.collection("contacts").delete(email)


def _record_consent(shop: Shop, contact_id: int, email: str, opt_in: bool, when: str) -> None:
    row_id = shop.next_id("consent")
    shop.collection("consent_history").put(
        str(row_id),
        {
            "id": row_id,
            "id_shop_contact": contact_id,
            "contact_data_email": email,
            "channel": "email",
            "consent": opt_in,
            "source": "customer_sync",
            "created_at": when,
        },
    )
