"""Numbers said in words on pages and in messages: "1 GPU", "2 GPUs", "1 department" — never "1 GPUs"."""

from decimal import Decimal


def number(value) -> str:
    """2 → "2", 0.5 → "0.5", Decimal("1.000") → "1"."""
    return f"{float(value):g}"


def count(value, one: str, many: str = "") -> str:
    """`value` and the noun that agrees with it: count(1, "GPU") == "1 GPU", count(3, "GPU") == "3 GPUs"."""
    many = many or one + "s"
    return f"{number(value)} {one if float(value) == 1 else many}"


def gpu_count(value: float | Decimal | int) -> str:
    return count(value, "GPU")


def noun(items, one: str, many: str = "") -> str:
    """The noun that agrees with how many `items` there are (a sized collection or a number)."""
    n = items if isinstance(items, (int, float, Decimal)) else len(items)
    return one if n == 1 else (many or one + "s")
