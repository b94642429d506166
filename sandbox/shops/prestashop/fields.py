"""What each webservice resource shows: its fields in output order, which are multilingual,
its associations, which fields have getters (not filterable), and which row column holds a
field the fake filters on without building records."""

from __future__ import annotations


def _f(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FIELDS: dict[str, tuple[str, ...]] = {
    "languages": _f("id name iso_code locale language_code active is_rtl date_format_lite"
                    " date_format_full"),
    "currencies": _f("id name symbol iso_code numeric_iso_code precision conversion_rate"
                     " deleted active"),
    "countries": _f("id id_zone id_currency call_prefix iso_code active contains_states"
                    " need_identification_number need_zip_code zip_code_format"
                    " display_tax_label name"),
    "configurations": _f("id value name id_shop_group id_shop date_add date_upd"),
    "groups": _f("id reduction price_display_method show_prices date_add date_upd name"),
    "order_states": _f("id unremovable delivery hidden send_email module_name invoice color"
                       " logable shipped paid pdf_delivery pdf_invoice deleted name template"),
    "carriers": _f("id deleted is_module id_tax_rules_group id_reference name active is_free"
                   " url shipping_handling shipping_external range_behavior shipping_method"
                   " max_width max_height max_depth max_weight grade external_module_name"
                   " need_range position delay"),
    "categories": _f("id id_parent level_depth nb_products_recursive active id_shop_default"
                     " is_root_category position date_add date_upd name link_rewrite"
                     " description meta_title meta_description meta_keywords"),
    "manufacturers": _f("id active link_rewrite name date_add date_upd description"
                        " short_description meta_title meta_description meta_keywords"),
    "product_options": _f("id is_color_group group_type position name public_name"),
    "product_option_values": _f("id id_attribute_group color position name"),
    "products": _f(
        "id id_manufacturer id_supplier id_category_default new cache_default_attribute"
        " id_default_image id_default_combination id_tax_rules_group position_in_category"
        " manufacturer_name quantity type id_shop_default reference supplier_reference"
        " location width height depth weight quantity_discount ean13 isbn upc mpn"
        " cache_is_pack cache_has_attachments is_virtual state additional_delivery_times"
        " product_type on_sale online_only ecotax minimal_quantity low_stock_threshold"
        " low_stock_alert price wholesale_price unity unit_price_ratio"
        " additional_shipping_cost customizable text_fields uploadable_files active"
        " redirect_type id_type_redirected available_for_order available_date"
        " show_condition condition show_price indexed visibility advanced_stock_management"
        " date_add date_upd pack_stock_type meta_description meta_keywords meta_title"
        " link_rewrite name description description_short available_now available_later"),
    "combinations": _f("id id_product location ean13 isbn upc mpn quantity reference"
                       " supplier_reference wholesale_price price ecotax weight"
                       " unit_price_impact minimal_quantity low_stock_threshold"
                       " low_stock_alert default_on available_date"),
    "customers": _f(
        "id id_default_group id_lang newsletter_date_add ip_registration_newsletter"
        " last_passwd_gen secure_key deleted passwd lastname firstname email id_gender"
        " birthday newsletter optin website company siret ape outstanding_allow_amount"
        " show_public_prices id_risk max_payment_days active note is_guest id_shop"
        " id_shop_group date_add date_upd reset_password_token reset_password_validity"),
    "addresses": _f("id id_customer id_manufacturer id_supplier id_warehouse id_country"
                    " id_state alias company lastname firstname vat_number address1 address2"
                    " postcode city other phone phone_mobile dni deleted date_add date_upd"),
    "carts": _f("id id_address_delivery id_address_invoice id_currency id_customer id_guest"
                " id_lang id_shop_group id_shop id_carrier recyclable gift gift_message"
                " mobile_theme delivery_option secure_key allow_seperated_package date_add"
                " date_upd"),
    "cart_rules": _f(
        "id id_customer date_from date_to description quantity quantity_per_user priority"
        " partial_use code minimum_amount minimum_amount_tax minimum_amount_currency"
        " minimum_amount_shipping country_restriction carrier_restriction group_restriction"
        " cart_rule_restriction product_restriction shop_restriction free_shipping"
        " reduction_percent reduction_amount reduction_tax reduction_currency"
        " reduction_product reduction_exclude_special gift_product gift_product_attribute"
        " highlight active date_add date_upd name"),
    "orders": _f(
        "id id_address_delivery id_address_invoice id_cart id_currency id_lang id_customer"
        " id_carrier current_state module invoice_number invoice_date delivery_number"
        " delivery_date valid date_add date_upd shipping_number note id_shop_group id_shop"
        " secure_key payment recyclable gift gift_message mobile_theme total_discounts"
        " total_discounts_tax_incl total_discounts_tax_excl total_paid total_paid_tax_incl"
        " total_paid_tax_excl total_paid_real total_products total_products_wt"
        " total_shipping total_shipping_tax_incl total_shipping_tax_excl carrier_tax_rate"
        " total_wrapping total_wrapping_tax_incl total_wrapping_tax_excl round_mode"
        " round_type conversion_rate reference"),
}
RESOURCES = tuple(sorted(FIELDS))

I18N: dict[str, frozenset[str]] = {
    "countries": frozenset({"name"}),
    "groups": frozenset({"name"}),
    "order_states": frozenset({"name", "template"}),
    "carriers": frozenset({"delay"}),
    "categories": frozenset(_f("name link_rewrite description meta_title meta_description"
                               " meta_keywords")),
    "manufacturers": frozenset(_f("description short_description meta_title"
                                  " meta_description meta_keywords")),
    "product_options": frozenset({"name", "public_name"}),
    "product_option_values": frozenset({"name"}),
    "products": frozenset(_f("meta_description meta_keywords meta_title link_rewrite name"
                             " description description_short available_now"
                             " available_later")),
    "cart_rules": frozenset({"name"}),
}
#: association name -> (node name of one element, its fields)
ASSOCIATIONS: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "categories": {"categories": ("category", ("id",))},
    "manufacturers": {"addresses": ("address", ("id",))},
    "product_options": {"product_option_values": ("product_option_value", ("id",))},
    "products": {
        "categories": ("category", ("id",)), "images": ("image", ("id",)),
        "combinations": ("combination", ("id",)),
        "product_option_values": ("product_option_value", ("id",)),
        "stock_availables": ("stock_available", ("id", "id_product_attribute")),
    },
    "combinations": {"product_option_values": ("product_option_value", ("id",)),
                     "images": ("image", ("id",))},
    "customers": {"groups": ("group", ("id",))},
    "carts": {"cart_rows": ("cart_row", ("id_product", "id_product_attribute",
                                         "id_address_delivery", "id_customization",
                                         "quantity"))},
    "orders": {"order_rows": ("order_row", (
        "id", "product_id", "product_attribute_id", "product_quantity", "product_name",
        "product_reference", "product_ean13", "product_isbn", "product_upc", "product_price",
        "id_customization", "unit_price_tax_incl", "unit_price_tax_excl"))},
}
#: fields computed by a getter: shown, but a filter on them is refused (code 34)
DYNAMIC: dict[str, frozenset[str]] = {
    "categories": frozenset({"nb_products_recursive"}),
    "manufacturers": frozenset({"link_rewrite"}),
    "products": frozenset({"manufacturer_name", "quantity", "position_in_category",
                           "id_default_image", "id_default_combination"}),
    "orders": frozenset({"shipping_number"}),
}
#: fields only PrestaShop 8 has
V8_ONLY = frozenset({"product_type", "mpn"})
#: resources whose table has date_add/date_upd columns
DATED = frozenset({"configurations", "groups", "categories", "manufacturers", "products",
                   "customers", "addresses", "carts", "cart_rules", "orders"})
#: field -> Row attribute, for filters the fake evaluates on rows (fast) instead of records
INDEX: dict[str, dict[str, str]] = {
    "customers": {"id_lang": "parent"},
    "addresses": {"id_customer": "customer", "id_country": "parent", "deleted": "flag"},
    "products": {"id_category_default": "parent", "id_manufacturer": "customer",
                 "active": "state"},
    "combinations": {"id_product": "parent", "default_on": "flag"},
    "carts": {"id_customer": "customer", "id_currency": "flag", "id_lang": "extra"},
    "orders": {"id_customer": "customer", "id_cart": "parent", "current_state": "state",
               "id_currency": "flag", "id_lang": "extra"},
    "categories": {"id_parent": "parent"},
    "product_option_values": {"id_attribute_group": "parent"},
}
SINGULAR = {
    "addresses": "address", "categories": "category", "countries": "country",
    "currencies": "currency", "order_states": "order_state", "cart_rules": "cart_rule",
    "product_options": "product_option", "product_option_values": "product_option_value",
}


def singular(resource: str) -> str:
    return SINGULAR.get(resource, resource.removesuffix("s"))


def fields_of(resource: str, version: str) -> tuple[str, ...]:
    fields = FIELDS[resource]
    return fields if version == "8" else tuple(f for f in fields if f not in V8_ONLY)
