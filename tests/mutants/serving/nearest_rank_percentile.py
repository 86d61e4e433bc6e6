"""Bug: percentiles by nearest rank (the smallest value with q% at or below it), without interpolation."""
import math


def _percentile(sorted_values, q):
    return sorted_values[max(math.ceil(q / 100 * len(sorted_values)) - 1, 0)]
