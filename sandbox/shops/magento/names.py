"""Word lists and fixed catalogue data of the generated Magento shop."""

from __future__ import annotations

FIRST_NAMES = (
    "Anna", "Ben", "Chloé", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Inès", "Jonas",
    "Kenji", "Lena", "Malik", "Noémie", "Oskar", "Priya", "Rosa", "Sven", "Tomasz", "Zoë",
)
LAST_NAMES = (
    "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "García", "Rossi", "Nowak",
    "O'Brien", "Nguyễn", "Johansson", "Yılmaz", "Dubois", "van der Berg", "Kowalski",
)
#: (city, postcode, country, region)
CITIES = (
    ("Berlin", "10115", "DE", "Berlin"), ("München", "80331", "DE", "Bayern"),
    ("Köln", "50667", "DE", "Nordrhein-Westfalen"), ("Wien", "1010", "AT", "Wien"),
    ("Zürich", "8001", "CH", "Zürich"), ("Paris", "75011", "FR", "Île-de-France"),
    ("Kraków", "31-001", "PL", "Małopolskie"), ("Austin", "78701", "US", "Texas"),
)
#: noun -> category id
NOUNS = {
    "T-Shirt": 4, "Hoodie": 4, "Cap": 5, "Beanie": 5, "Mug": 7, "Tea Tin": 8,
    "Poster": 9, "Album": 11, "Single": 11,
}
#: products at these positions are the same in every seed
ODD_PRODUCTS = {
    1: ("Tasse ☕ « Café Crème »", 7),
    2: ("כובע קש", 5),  # right-to-left
    3: ("🦄 Unicorn sticker 👩\u200d💻", 9),
}
COLORS = ("Red", "Blue", "Black", "Green", "White", "Ochre")
SIZES = ("XS", "S", "M", "L", "XL")

#: (id, name, parent id, is_active); 1 is the invisible root, 2 the store's root category
CATEGORIES = (
    (1, "Root Catalog", 0, True),
    (2, "Default Category", 1, True),
    (3, "Clothing", 2, True),
    (4, "Tops", 3, True),
    (5, "Hats", 3, True),
    (6, "Home & Décor", 2, True),
    (7, "Mugs", 6, True),
    (8, "Café ☕ & Thé", 6, True),
    (9, "Posters", 6, True),
    (10, "Music", 2, True),
    (11, "Albums", 10, True),
    (12, "Sale 2023", 2, False),
)

#: ((state, status), weight): Magento's default order states and statuses, plus one custom
ORDER_STATES = (
    (("complete", "complete"), 55), (("processing", "processing"), 14),
    (("processing", "ready_for_pickup"), 4), (("new", "pending"), 6),
    (("pending_payment", "pending_payment"), 3), (("holded", "holded"), 3),
    (("canceled", "canceled"), 8), (("closed", "closed"), 5), (("payment_review", "fraud"), 2),
)

#: (code, percent)
COUPONS = (("WELCOME10", 10), ("SUMMER15", 15), ("ÉTÉ25", 25))
PAYMENTS = (("checkmo", "Check / Money order"), ("banktransfer", "Bank Transfer Payment"),
            ("braintree", "Credit Card (Braintree)"), ("paypal_express", "PayPal Express"))
#: (carrier_method, description, price in cents)
SHIPPING = (("flatrate_flatrate", "Flat Rate - Fixed", 500),
            ("tablerate_bestway", "Best Way - Table Rate", 690),
            ("dhl_express", "DHL - Express", 1290))
