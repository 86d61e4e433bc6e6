"""Bug: the variant with more correct answers is kept whether or not the difference is significant."""
_solution_compare = compare_variants


def compare_variants(a, b):
    result = _solution_compare(a, b)
    if result["accuracy_a"] != result["accuracy_b"]:
        result["keep"] = "a" if result["accuracy_a"] > result["accuracy_b"] else "b"
    return result
