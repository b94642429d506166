"""Word lists for the generated shop, including the odd names real shops hold."""

from __future__ import annotations

FIRST_NAMES = ("Alice", "Bruno", "Chloé", "Dmitri", "Élodie", "Farid", "Greta", "Hugo", "Inès",
               "Jonas", "Kenji", "Léa", "Malik", "Noémie", "Oskar", "Priya", "Rosa", "Sven",
               "Tomasz", "Valentina", "Wen", "Yasmine", "Zoë")
LAST_NAMES = ("Martin", "Bernard", "Dubois", "Müller", "García", "Rossi", "Nowak", "O'Brien",
              "Smith", "Nguyễn", "Johansson", "Silva", "Yılmaz", "Lefèvre", "van der Berg")
CITIES = (("Paris", "75011", "FR"), ("Lyon", "69003", "FR"), ("Bruxelles", "1000", "BE"),
          ("Genève", "1204", "CH"), ("Berlin", "10115", "DE"), ("Madrid", "28013", "ES"),
          ("Milano", "20121", "IT"), ("Kraków", "31-001", "PL"))
#: customers at these positions are the same in every seed: names that break naive code
ODD_CUSTOMERS = (("Rene\u0301e", "Zoe\u0308lle"), ("مريم", "الحسيني"), ("Ana 🌸", "Lima 👩\u200d💻"),
                 ("Bad", "Email"), ("小龙", "李"))
#: noun -> collection handle
NOUNS = {"T-Shirt": "t-shirts", "Hoodie": "hoodies", "Cap": "hats", "Beanie": "hats",
         "Mug": "mugs", "Poster": "posters", "Tea Tin": "tea", "Tote Bag": "accessories",
         "Scarf": "accessories"}
VENDORS = ("Atelier Nord", "Bloom & Co", "Café Lumière", "Kōbō Studio", "Mercer Goods",
           "shopsync-fake")
#: (handle, title); every product is also in "all" (a smart collection in a real shop)
COLLECTIONS = (("all", "All products"), ("t-shirts", "T-shirts"), ("hoodies", "Hoodies"),
               ("hats", "Hats"), ("mugs", "Mugs"), ("posters", "Posters"),
               ("tea", "Thé ☕ & Café"), ("accessories", "Accessories"),
               ("frontpage", "Home page"))
COLORS = ("Red", "Blue", "Black", "Green", "White")
SIZES = ("S", "M", "L", "XL")
#: (title, kind, value: percent*100 or cents, codes, minimum subtotal in cents)
DISCOUNTS = (
    ("Welcome 10%", "percent", 1000, ("WELCOME10",), 0),
    ("Summer sale", "percent", 1500, ("SUMMER15", "SOMMER15", "ETE15"), 0),
    ("Été 25", "percent", 2500, ("ÉTÉ25",), 0),
    ("5 off", "amount", 500, ("5OFF",), 2000),
    ("Big spender", "amount", 2000, ("BIGSPENDER",), 10000),
    ("Free shipping", "shipping", 0, ("FREESHIP",), 5000),
    ("Buy two mugs", "bxgy", 0, ("MUGS2",), 0),
)
FINANCIAL_STATUSES = (("PAID", 62), ("PENDING", 8), ("AUTHORIZED", 6), ("PARTIALLY_PAID", 2),
                      ("PARTIALLY_REFUNDED", 5), ("REFUNDED", 6), ("VOIDED", 4), ("EXPIRED", 2))
FULFILLMENT_STATUSES = ("FULFILLED", "IN_PROGRESS", "ON_HOLD", "OPEN", "PARTIALLY_FULFILLED",
                        "PENDING_FULFILLMENT", "RESTOCKED", "SCHEDULED", "UNFULFILLED")
