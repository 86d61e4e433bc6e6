"""Bug: cached input is billed at the full input price."""


class UsageLedger(UsageLedger):
    def cost(self, prices):
        return super().cost(prices) + self.totals()["cached_input"] * (prices["input"] - prices["cached_input"])
