"""Saved views of the lists of the table component (studio/tables.py): a user names the query string of a list
page (its filters, search and order) and finds it again as a link on that page. The query string is the whole
view: the same URL opened by anyone shows the same filters (over what they may see), so a view is also shared by
its link. A view is its owner's only: another user's id is a 404."""

from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import Resolver404, resolve

# Parameters of a list's URL that are not part of a view: the page (a view starts on its first page).
NOT_KEPT = {"offset", "csrfmiddlewaretoken"}
MAX_QUERY = 2000
MAX_NAME = 60
MAX_PER_LIST = 50


class SavedView(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views")
    path = models.CharField(max_length=300)  # the list page's path, e.g. /workloads
    name = models.CharField(max_length=MAX_NAME)
    query = models.CharField(max_length=MAX_QUERY, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["user", "path", "name"], name="saved_view_unique_name")]
        indexes = [models.Index(fields=["user", "path"])]

    def __str__(self):
        return self.name

    @property
    def url(self) -> str:
        return f"{self.path}?{self.query}" if self.query else self.path


def view_query(query: str) -> str:
    """The query string a view keeps: the list's own parameters, blanks and paging dropped, in their order."""
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in NOT_KEPT and v.strip()]
    return urlencode(pairs)


def is_page(path: str) -> bool:
    """A path of this site's own pages (the view's link and the redirect after saving it): never another host
    (`//x`, `/\\x`, a scheme)."""
    if not path.startswith("/") or path.startswith("//") or "\\" in path or len(path) > 300:
        return False
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


# --- writes ----------------------------------------------------------------------------------------------------

def saved_view_save(*, user, path: str, name: str, query: str) -> SavedView:
    """Save (or replace, under the same name) the view `query` of the list at `path`; each problem named."""
    name = " ".join(name.split())
    errors = {}
    if not name:
        errors["name"] = "Give the view a name."
    elif len(name) > MAX_NAME:
        errors["name"] = f"At most {MAX_NAME} characters."
    if not is_page(path):
        errors["path"] = "Not a page of this site."
    query = view_query(query)
    if len(query) > MAX_QUERY:
        errors["query"] = f"The filters are too long to keep (at most {MAX_QUERY} characters)."
    if not errors and name not in set(SavedView.objects.filter(user=user, path=path).values_list("name", flat=True)) \
            and SavedView.objects.filter(user=user, path=path).count() >= MAX_PER_LIST:
        errors["name"] = f"At most {MAX_PER_LIST} views a list: delete one first."
    if errors:
        raise ValidationError(errors)
    view, _ = SavedView.objects.update_or_create(user=user, path=path, name=name, defaults={"query": query})
    return view


def saved_view_delete(*, user, view_id: int) -> None:
    """Delete one of the user's views (another's is not found: SavedView.DoesNotExist)."""
    SavedView.objects.get(user=user, pk=view_id).delete()


# --- reads -----------------------------------------------------------------------------------------------------

def saved_views_of(user, path: str) -> list[SavedView]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(SavedView.objects.filter(user=user, path=path))
