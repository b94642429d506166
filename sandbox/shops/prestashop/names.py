"""The fake shop's reference data and word lists: PrestaShop's own defaults (order states,
groups, the demo categories) in English, French and German, plus the odd names real shops
hold."""

from __future__ import annotations


def t(en: str, fr: str | None = None, de: str | None = None) -> dict[int, str]:
    """A multilingual value: language id -> text (4, Spanish, is installed but inactive)."""
    return {1: en, 2: fr if fr is not None else en, 3: de if de is not None else en, 4: en}


#: (id, name, iso_code, locale, language_code, active when at least this many are)
LANGUAGES = (
    (1, "English (English)", "en", "en-US", "en-us", 1),
    (2, "Français (French)", "fr", "fr-FR", "fr-fr", 2),
    (3, "Deutsch (German)", "de", "de-DE", "de-de", 3),
    (4, "Español (Spanish)", "es", "es-ES", "es-es", 99),
)
#: (id, iso_code, numeric, name, symbol, conversion_rate)
CURRENCIES = ((1, "EUR", "978", "Euro", "€", 1.0), (2, "USD", "840", "US Dollar", "$", 1.08))
#: (id, iso_code, call prefix, name)
COUNTRIES = (
    (1, "DE", 49, t("Germany", "Allemagne", "Deutschland")),
    (3, "BE", 32, t("Belgium", "Belgique", "Belgien")),
    (6, "ES", 34, t("Spain", "Espagne", "Spanien")),
    (8, "FR", 33, t("France", "France", "Frankreich")),
    (10, "IT", 39, t("Italy", "Italie", "Italien")),
    (14, "PL", 48, t("Poland", "Pologne", "Polen")),
    (17, "GB", 44, t("United Kingdom", "Royaume-Uni", "Vereinigtes Königreich")),
    (19, "CH", 41, t("Switzerland", "Suisse", "Schweiz")),
    (21, "US", 1, t("United States", "États-Unis", "Vereinigte Staaten")),
)
CITIES = (
    ("Paris", "75011", 8), ("Lyon", "69003", 8), ("Bruxelles", "1000", 3),
    ("Genève", "1204", 19), ("Berlin", "10115", 1), ("Köln", "50667", 1),
    ("Madrid", "28013", 6), ("Milano", "20121", 10), ("Kraków", "31-001", 14),
    ("London", "SW1A 1AA", 17), ("New York", "10001", 21),
)

#: (id, name, color, paid, shipped, delivery, invoice, logable, deleted, template)
ORDER_STATES = (
    (1, t("Awaiting check payment", "En attente du paiement par chèque",
          "Warten auf Zahlungseingang Scheck"), "#34209E", 0, 0, 0, 0, 0, 0, "cheque"),
    (2, t("Payment accepted", "Paiement accepté", "Zahlung eingegangen"),
     "#3498D8", 1, 0, 0, 1, 1, 0, "payment"),
    (3, t("Processing in progress", "En cours de préparation", "Bestellung in Bearbeitung"),
     "#3498D8", 1, 0, 0, 1, 1, 0, "preparation"),
    (4, t("Shipped", "Expédié", "Versandt"), "#01b887", 1, 1, 1, 1, 1, 0, "shipped"),
    (5, t("Delivered", "Livré", "Zugestellt"), "#01b887", 1, 1, 1, 1, 1, 0, ""),
    (6, t("Canceled", "Annulé", "Storniert"), "#2C3E50", 0, 0, 0, 0, 0, 0, "order_canceled"),
    (7, t("Refunded", "Remboursé", "Erstattet"), "#ec2e15", 1, 0, 0, 1, 0, 0, "refund"),
    (8, t("Payment error", "Erreur de paiement", "Zahlungsfehler"), "#ec2e15", 0, 0, 0, 0, 0, 0,
     "payment_error"),
    (9, t("On backorder (paid)", "En attente de réapprovisionnement (payé)",
          "Artikel nicht auf Lager (bezahlt)"), "#3498D8", 1, 0, 0, 1, 1, 0, "outofstock"),
    (10, t("Awaiting bank wire payment", "En attente de virement bancaire",
           "Warten auf Zahlungseingang Überweisung"), "#34209E", 0, 0, 0, 0, 0, 0, "bankwire"),
    (11, t("Remote payment accepted", "Paiement à distance accepté",
           "Zahlung eingegangen (extern)"), "#3498D8", 1, 0, 0, 1, 1, 0, "payment"),
    (12, t("On backorder (not paid)", "En attente de réapprovisionnement (non payé)",
           "Artikel nicht auf Lager"), "#34209E", 0, 0, 0, 0, 0, 0, "outofstock"),
    (13, t("Awaiting Cash On Delivery validation", "En attente de paiement à la livraison",
           "Warten auf Bestätigung Nachnahme"), "#34209E", 0, 0, 0, 0, 0, 0, "cashondelivery"),
    (14, t("Awaiting call ☎ (legacy)", "En attente d'appel ☎ (ancien)", "Warten auf Anruf ☎"),
     "#999999", 0, 0, 0, 0, 0, 1, ""),
)
#: states an order is valid (counted as a sale) in
VALID_STATES = frozenset({2, 3, 4, 5, 9, 11})
#: (state, weight) of generated orders
STATE_WEIGHTS = ((5, 45), (4, 14), (2, 8), (3, 6), (1, 5), (10, 5), (6, 7), (7, 4), (8, 3),
                 (9, 1), (11, 1), (12, 1))

#: (id, name, id_reference, active, deleted, is_free, delay)
CARRIERS = (
    (1, "Click and collect", 1, 1, 0, 1, t("Pick up in-store", "Retrait en magasin",
                                           "Abholung im Geschäft")),
    (2, "My carrier", 2, 1, 0, 0, t("Delivery next day!", "Livraison le lendemain !",
                                    "Lieferung am nächsten Tag!")),
    (3, "Colissimo", 3, 1, 0, 0, t("2-3 days", "2-3 jours", "2-3 Tage")),
    (4, "DHL Express", 4, 1, 1, 0, t("24h", "24h", "24 Std.")),
    # editing a carrier in the back office deletes it (flag) and creates a copy with a new
    # id and the same id_reference: orders keep pointing at the old id
    (5, "DHL Express", 4, 1, 0, 0, t("24h", "24h", "24 Std.")),
)
LIVE_CARRIERS = (1, 2, 3, 5)

#: (id, name)
GROUPS = (
    (1, t("Visitor", "Visiteur", "Besucher")), (2, t("Guest", "Invité", "Gast")),
    (3, t("Customer", "Client", "Kunde")), (4, t("VIP ⭐", "VIP ⭐", "VIP ⭐")),
    (5, t("Wholesale", "Professionnels", "Großhändler")),
)

#: (id, parent, name, active): PrestaShop's demo tree under Root (1) and Home (2)
CATEGORIES = (
    (1, 0, t("Root", "Racine", "Wurzel"), 1),
    (2, 1, t("Home", "Accueil", "Startseite"), 1),
    (3, 2, t("Clothes", "Vêtements", "Kleidung"), 1),
    (4, 3, t("Men", "Hommes", "Herren"), 1),
    (5, 3, t("Women", "Femmes", "Damen"), 1),
    (6, 2, t("Accessories", "Accessoires", "Zubehör"), 1),
    (7, 6, t("Stationery", "Papeterie", "Schreibwaren"), 1),
    (8, 6, t("Home Accessories", "Accessoires de maison", "Wohnaccessoires"), 1),
    (9, 2, t("Art", "Art", "Kunst"), 1),
    (10, 8, t("Café ☕ & Thé", "Café ☕ & Thé", "Kaffee ☕ & Tee"), 0),
)
#: (id, name, active)
MANUFACTURERS = ((1, "Studio Design", 1), (2, "Graphic Corner", 1), (3, "Café & Co ☕", 1),
                 (4, "Ancienne Maison", 0))

#: attribute groups: (id, name, public name, is_color_group)
PRODUCT_OPTIONS = ((1, t("Size", "Taille", "Größe"), t("Size", "Taille", "Größe"), 0),
                   (2, t("Color", "Couleur", "Farbe"), t("Color", "Couleur", "Farbe"), 1))
#: attribute values: (id, group, name, color)
PRODUCT_OPTION_VALUES = (
    (1, 1, t("S"), ""), (2, 1, t("M"), ""), (3, 1, t("L"), ""), (4, 1, t("XL"), ""),
    (5, 2, t("White", "Blanc", "Weiß"), "#ffffff"), (6, 2, t("Black", "Noir", "Schwarz"), "#434A54"),
    (7, 2, t("Red", "Rouge", "Rot"), "#E84C3D"), (8, 2, t("Sky blue", "Bleu ciel", "Himmelblau"), "#5D9CEC"),
)

#: (adjective en/fr/de)
ADJECTIVES = (t("Classic", "Classique", "Klassisch"), t("Vintage", "Vintage", "Vintage"),
              t("Organic", "Bio", "Bio"), t("Hummingbird", "Colibri", "Kolibri"),
              t("Minimal", "Minimaliste", "Minimalistisch"), t("Mountain fox", "Renard", "Bergfuchs"))
#: (noun, category id)
NOUNS = ((t("T-shirt", "T-shirt", "T-Shirt"), 4), (t("Sweater", "Pull", "Pullover"), 5),
         (t("Mug", "Mug", "Tasse"), 8), (t("Cushion", "Coussin", "Kissen"), 8),
         (t("Notebook", "Carnet", "Notizbuch"), 7), (t("Poster", "Affiche", "Poster"), 9))
#: products at these positions are the same in every seed
ODD_PRODUCTS = {
    1: (t("Tasse ☕ « Café Crème »"), 10),
    2: (t("🦄 Unicorn sticker 👩\u200d💻", "🦄 Autocollant licorne 👩\u200d💻", ""), 7),  # no German
    3: (t("כובע קש", "כובע קש", "כובע קש"), 6),  # right-to-left
    4: (t("Cre\u0300me bru\u0302le\u0301e candle", "Bougie cre\u0300me bru\u0302le\u0301e",
          "Crème-brûlée-Kerze"), 8),  # combining accents
}

FIRST_NAMES = ("Alice", "Bruno", "Chloé", "Dmitri", "Élodie", "Farid", "Greta", "Hugo", "Inès",
               "Jonas", "Kenji", "Léa", "Malik", "Noémie", "Oskar", "Priya", "Quentin", "Rosa",
               "Sven", "Tomasz", "Valentina", "Wen", "Yasmine", "Zoë")
LAST_NAMES = ("Martin", "Bernard", "Dubois", "Müller", "García", "Rossi", "Nowak", "O'Brien",
              "Smith", "Nguyễn", "Johansson", "Silva", "Novák", "Yılmaz", "Lefèvre", "Schmidt")
#: (module, payment label)
PAYMENTS = (("ps_checkpayment", "Payments by check"), ("ps_wirepayment", "Bank wire"),
            ("stripe_official", "Stripe"), ("ps_cashondelivery", "Cash on delivery (COD)"))
