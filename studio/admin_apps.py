"""django.contrib.admin with PaaS Studio's site (studio/admin_site.py: served only with ADMIN_SITE_ENABLED). Its own
module: an app config is imported before the apps are ready, the site after."""

from django.contrib.admin.apps import AdminConfig


class StudioAdminConfig(AdminConfig):
    default_site = "studio.admin_site.StudioAdminSite"
