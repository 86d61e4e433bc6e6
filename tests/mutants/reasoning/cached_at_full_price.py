"""Bug: cached input is billed at the full input price."""


class UsageLedger(UsageLedger):
    def cost(self, prices):
        return super().cost({**prices, "cached_input": prices["input"]})
