"""Word lists for the generated shop, including the odd names real shops hold."""

from __future__ import annotations

FIRST_NAMES = (
    "Alice", "Bruno", "Chloé", "Dmitri", "Élodie", "Farid", "Greta", "Hugo", "Inès", "Jonas",
    "Kenji", "Léa", "Malik", "Noémie", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tomasz",
    "Ugo", "Valentina", "Wen", "Xavier", "Yasmine", "Zoë",
)
LAST_NAMES = (
    "Martin", "Bernard", "Dubois", "Müller", "García", "Rossi", "Nowak", "O'Brien", "Smith",
    "Nguyễn", "Johansson", "Silva", "Novák", "Yılmaz", "Petit", "Lefèvre", "Schmidt",
    "Janssen", "Costa", "van der Berg",
)
CITIES = (
    ("Paris", "75011", "FR"), ("Lyon", "69003", "FR"), ("Bruxelles", "1000", "BE"),
    ("Genève", "1204", "CH"), ("Berlin", "10115", "DE"), ("Köln", "50667", "DE"),
    ("Madrid", "28013", "ES"), ("Milano", "20121", "IT"), ("Kraków", "31-001", "PL"),
    ("London", "SW1A 1AA", "GB"),
)

#: noun -> category slug
NOUNS = {
    "T-Shirt": "t-shirts", "Hoodie": "hoodies", "Cap": "hats", "Beanie": "hats",
    "Mug": "mugs", "Poster": "posters", "Tea Tin": "cafe-the", "Album": "albums",
    "Single": "singles", "Tote Bag": "accessories", "Scarf": "accessories",
}
#: products at these positions are the same in every seed (see data.py for their roles)
ODD_PRODUCTS = {
    1: ("Tasse ☕ « Café Crème »", "mugs"),
    2: ("Store credit adjustment", "uncategorized"),
    3: ("כובע קש", "hats"),  # right-to-left
    4: ("Cre\u0300me bru\u0302le\u0301e candle", "uncategorized"),
    5: ("🦄 Unicorn sticker 👩\u200d💻", "accessories"),
}
COLORS = ("Red", "Blue", "Black", "Green", "White", "Ochre")
SIZES = ("XS", "S", "M", "L", "XL", "XXL")

#: (id, name, parent id, slug); 15 is WooCommerce's own "Uncategorized"
CATEGORIES = (
    (15, "Uncategorized", 0, "uncategorized"),
    (16, "Clothing", 0, "clothing"),
    (17, "T-shirts", 16, "t-shirts"),
    (18, "Hoodies", 16, "hoodies"),
    (19, "Accessories", 16, "accessories"),
    (20, "Hats", 19, "hats"),
    (21, "Home & Décor", 0, "home-decor"),
    (22, "Mugs", 21, "mugs"),
    (23, "Café ☕ & Thé", 21, "cafe-the"),
    (24, "Posters", 21, "posters"),
    (25, "Music", 0, "music"),
    (26, "Albums", 25, "albums"),
    (27, "Singles", 25, "singles"),
)

#: (code, discount_type, amount in cents or percent*100, note)
COUPONS = (
    ("welcome10", "percent", 1000, "10% off the first order"),
    ("summer-2025", "percent", 1500, "summer sale"),
    ("été25", "percent", 2500, "unicode code"),
    ("5off", "fixed_cart", 500, "5 EUR off the cart"),
    ("bigspender", "fixed_cart", 2000, "20 EUR off above 100 EUR"),
    ("expired-spring", "fixed_cart", 1000, "expired"),
    ("mug2", "fixed_product", 200, "2 EUR off each mug"),
    ("tee-deal", "fixed_product", 350, "3.50 EUR off each tee"),
    ("freeship", "fixed_product", 0, "free shipping only"),
)

ORDER_STATUSES = (
    ("pending", "Pending payment"), ("processing", "Processing"), ("on-hold", "On hold"),
    ("completed", "Completed"), ("cancelled", "Cancelled"), ("refunded", "Refunded"),
    ("failed", "Failed"), ("checkout-draft", "Draft"),
)
