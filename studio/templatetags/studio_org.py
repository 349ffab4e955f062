"""Template helpers of the organisation pages' quota form: a cell's input labelled by its field's label (the
table's headers say it to the eye), and a dict read by key."""

from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    return (mapping or {}).get(key)


@register.filter
def aria_label(field):
    """The bound field's widget, labelled for assistive technology, marked invalid with its error when it has one."""
    attrs = {"aria-label": field.label, "class": "form-control form-control-sm"}
    if field.errors:
        attrs.update({"aria-invalid": "true", "aria-describedby": f"{field.auto_id}-error"})
    return field.as_widget(attrs=attrs)


@register.filter
def attr_aria(field):
    return field.as_widget(attrs={"aria-label": field.label, "class": "form-select form-select-sm"})
