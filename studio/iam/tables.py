"""The users list as a table (studio.tables): columns, natural sort of usernames, CSV export."""

from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import format_html

from studio.filtersets import UserFilterSet
from studio.iam.models import AccessKey
from studio.listing import StudioFilterSet
from studio.tables import BulkAction, Column, Table


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


class AccessKeyFilterSet(StudioFilterSet):
    class Meta:
        model = AccessKey
        fields = []
        api_fields = {"name": "name", "createdAt": "created_at", "lastUsedAt": "last_used_at"}
        search_fields = ["name", "client_id"]
        default_sort = ["-created_at"]


class AccessKeyTable(Table):
    """One's own access keys (never a secret: it is stored hashed); bulk delete, CSV export of names and ids."""

    name = "access-keys"
    noun, noun_one = "access keys", "access key"
    filterset_class = AccessKeyFilterSet
    export_url_name = "portal-access-keys-export"
    bulk_url_name = "portal-access-keys-bulk"
    bulk_actions = (BulkAction("delete", "Delete", "trash", danger=True),)
    empty_template = "studio/_access_keys_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda k: k.name, sort="name", natural=True),
            Column("client_id", "Client id", lambda k: k.client_id,
                   html=lambda k: format_html("<code>{}</code>", k.client_id)),
            Column("created", "Created", lambda k: _when(k.created_at), sort="createdAt"),
            Column("last_used", "Last used", lambda k: _when(k.last_used_at) or "never", sort="lastUsedAt"),
            Column("actions", "Actions", lambda k: "", export=False,
                   html=lambda k: get_template("studio/_access_key_actions.html").render({"k": k},
                                                                                      request=self.request)),
        )

    def row_label(self, row) -> str:
        return row.name
