"""The Marketing API's operations, one mixin per area; ``MarketingClient`` combines them."""
