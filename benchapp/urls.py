from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from . import views
from .api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    # Where Django users expect them; /login/ and /logout/ stay as redirects for old links.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(template_name="benchapp/login.html"),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("favicon.ico", RedirectView.as_view(url="/static/benchapp/favicon.svg", permanent=True)),
    path("login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    path(
        "logout/", RedirectView.as_view(pattern_name="logout", query_string=True, permanent=False)
    ),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("evolution.urls")),
    path("", include("review.urls")),
    path("", include("releases.urls")),
    path("", include("reasoning.urls")),
    path("", include("frontiersmith.urls")),
    path("", include("evosyn.urls")),
    path("", include("xcoder.urls")),
]
