"""Run:ai's paging and sorting parameters of the lists that are not asset lists (data volumes, storage class
configurations): `offset`, `limit` (1–500), `sortBy` among the list's fields and `sortOrder`, each problem named."""

from studio.ids import parse_id


def page_problems(params, sorts, problems: dict) -> dict:
    """{"offset", "limit"} of the request (defaults 0 and 50); each bad parameter added to `problems`."""
    page = {}
    for name, low, high, default in (("offset", 0, None, 0), ("limit", 1, 500, 50)):
        raw = params.get(name)
        value = parse_id(raw) if raw not in (None, "") else default
        if value is None or value < low or (high and value > high):
            problems[name] = [f"Must be an integer from {low}" + (f" to {high}." if high else " up.")]
        page[name] = value
    if params.get("sortBy") and params["sortBy"] not in sorts:
        problems["sortBy"] = [f"Must be one of {', '.join(sorts)}."]
    if params.get("sortOrder") not in (None, "", "asc", "desc"):
        problems["sortOrder"] = ["Must be asc or desc."]
    return page
