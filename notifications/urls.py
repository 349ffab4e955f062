from django.urls import path

from notifications import views

urlpatterns = [
    path("notifications", views.notifications_page, name="notifications"),
    path("notifications/bell", views.bell, name="notification-bell"),
    path("notifications/read-all", views.mark_all_read, name="notifications-read-all"),
    path("notifications/<uuid:pk>/read", views.mark_read, name="notification-read"),
    path("notifications/subscriptions/<uuid:pk>/delete", views.subscription_delete,
         name="notification-subscription-delete"),
    path("notifications/channels/<str:name>/delete", views.channel_delete, name="notification-channel-delete"),
]
