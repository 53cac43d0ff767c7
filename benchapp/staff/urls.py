from django.urls import path

from . import views, views_ops

app_name = "staff"
urlpatterns = [
    path("", views.index, name="index"),
    path("endpoints/", views.endpoint_list, name="endpoint_list"),
    path("endpoints/new/", views.endpoint_new, name="endpoint_new"),
    path("endpoints/<int:pk>/", views.endpoint_detail, name="endpoint_detail"),
    path("endpoints/<int:pk>/edit/", views.endpoint_edit, name="endpoint_edit"),
    path("endpoints/<int:pk>/test/", views.endpoint_test, name="endpoint_test"),
    path("endpoints/<int:pk>/errors/", views.endpoint_errors, name="endpoint_errors"),
    path("endpoints/<int:pk>/delete/", views.endpoint_delete, name="endpoint_delete"),
    path("panels/", views.panel_list, name="panel_list"),
    path("panels/new/", views.panel_new, name="panel_new"),
    path("panels/<int:pk>/", views.panel_detail, name="panel_detail"),
    path("panels/<int:pk>/edit/", views.panel_edit, name="panel_edit"),
    path("import/", views_ops.import_new, name="import_new"),
    path("import/<int:pk>/", views_ops.import_detail, name="import_detail"),
    path("users/", views.user_list, name="user_list"),
    path("users/new/", views.user_new, name="user_new"),
    path("users/<int:pk>/", views.user_detail, name="user_detail"),
    path("users/<int:pk>/active/", views.user_active, name="user_active"),
    path("workers/", views_ops.worker_overview, name="workers"),
]
