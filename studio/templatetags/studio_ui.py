"""Small pieces every page uses: icons from the vendored Tabler sprite, phase colours, sortable column headers and
links that change one query parameter while keeping the others (filters survive sorting and paging)."""

from django import template
from django.templatetags.static import static
from django.utils.html import format_html

register = template.Library()

PHASE_COLOURS = {
    "Running": "green", "Completed": "teal", "Connected": "green", "active": "green", "Ready": "green",
    "Creating": "azure", "Pending": "yellow", "Initializing": "azure", "Resuming": "azure", "Stopping": "orange",
    "Deleting": "orange", "Unknown": "secondary", "draft": "yellow",
    "Stopped": "secondary", "Failed": "red", "Degraded": "red", "Disconnected": "red", "disabled": "red",
}


@register.simple_tag
def icon(name: str, extra: str = ""):
    """An icon from the vendored sprite; decorative (the text beside it names the thing)."""
    href = f"{static('vendor/tabler-icons/sprite.svg')}#ti-{name}"
    return format_html('<svg class="icon {}" aria-hidden="true" focusable="false"><use href="{}"></use></svg>',
                       extra, href)


@register.filter
def phase_class(phase) -> str:
    """Tabler's light badge colour for a phase or state: green running, red failed, yellow waiting."""
    return f"bg-{PHASE_COLOURS.get(str(phase), 'secondary')}-lt"


@register.simple_tag(takes_context=True)
def query_with(context, **changes) -> str:
    """The current query string with some parameters replaced (None removes one); repeated ones are kept."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        params.pop(key, None)
        if value not in (None, ""):
            params[key] = value
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.inclusion_tag("studio/_sort_th.html", takes_context=True)
def sort_th(context, label: str, field: str = "", col: str = "", hidden: bool = False):
    """A column header that sorts the list by an API field (the FilterSet's sortBy); clicking again reverses."""
    request = context["request"]
    current = request.GET.get("sortBy")
    descending = request.GET.get("sortOrder") == "desc"
    state = "none"
    if field and current == field:
        state = "descending" if descending else "ascending"
    params = request.GET.copy()
    for key in ("sortBy", "sortOrder", "offset"):
        params.pop(key, None)
    if field:
        params["sortBy"] = field
        params["sortOrder"] = "asc" if state == "descending" else ("desc" if state == "ascending" else "asc")
    return {"label": label, "field": field, "state": state, "href": f"?{params.urlencode()}", "col": col,
            "hidden": hidden}
