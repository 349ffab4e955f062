"""The users list as a table (studio.tables): columns, natural sort of usernames, CSV export."""

from django.urls import reverse
from django.utils.html import format_html

from studio.filtersets import UserFilterSet
from studio.tables import Column, Table


def _when(value, fmt="%Y-%m-%d %H:%M") -> str:
    return value.strftime(fmt) if value else ""


class UserTable(Table):
    name = "users"
    noun = "users"
    noun_one = "user"
    filterset_class = UserFilterSet
    export_url_name = "portal-users-export"
    empty_template = "studio/_users_empty.html"

    def __init__(self, request, queryset, *, admins: set, **kwargs):
        super().__init__(request, queryset, **kwargs)
        self.admins = admins

    @property
    def columns(self):
        return (
            Column("username", "Username", lambda u: u.username, sort="username", natural=True,
                   html=lambda u: format_html('<a href="{}">{}</a>', reverse("portal-user", args=[u.pk]), u.username)),
            Column("email", "Email", lambda u: u.email),
            Column("status", "Status", lambda u: "Active" if u.is_active else "Deactivated",
                   html=lambda u: format_html('<span class="badge {}">{}</span>',
                                              "bg-green-lt" if u.is_active else "bg-secondary-lt",
                                              "Active" if u.is_active else "Deactivated")),
            Column("role", "Role", self._role, html=lambda u: format_html(
                '<span class="badge bg-purple-lt">Platform admin</span>') if self._role(u) == "Platform admin"
                else format_html('<span class="text-secondary">{}</span>', self._role(u))),
            Column("password", "Password", lambda u: "Temporary" if getattr(u, "must_change_password", False) else "",
                   default=False),
            Column("last_login", "Last login", lambda u: _when(u.last_login) or "never", sort="lastLogin"),
            Column("created", "Created", lambda u: _when(u.date_joined, "%Y-%m-%d"), sort="creationTime"),
        )

    def _role(self, user) -> str:
        return "Platform admin" if user.is_superuser or user.pk in self.admins else "Project roles"

    def row_label(self, row) -> str:
        return row.username
