from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

import evolution.urls
from evolution.benchevolver.analytics.reviews import ReviewAggregates
from review.analytics import problem_review_aggregates, review_fingerprint_annotations

from . import session_guard, views
from .api import api

# Where BenchEvolver's review-based charts read review aggregates: review's, composed here at
# the top (the engine sits below review; review imports nothing of BenchEvolver).
REVIEW_AGGREGATES = ReviewAggregates(
    aggregates=problem_review_aggregates, fingerprint=review_fingerprint_annotations
)

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
    path("accounts/session/", session_guard.session_state, name="session_state"),
    path("accounts/back/", session_guard.logged_in_again, name="logged_in_again"),
    path("favicon.ico", RedirectView.as_view(url="/static/img/favicon.svg", permanent=True)),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(template_name="benchapp/password_change.html"),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="benchapp/password_done.html"),
        name="password_change_done",
    ),
    path(
        "accounts/password_reset/",
        auth_views.PasswordResetView.as_view(
            template_name="benchapp/password_reset.html",
            email_template_name="benchapp/password_reset_email.txt",
            subject_template_name="benchapp/password_reset_subject.txt",
        ),
        name="password_reset",
    ),
    path(
        "accounts/password_reset/done/",
        auth_views.PasswordResetDoneView.as_view(template_name="benchapp/password_reset_sent.html"),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="benchapp/password_reset_confirm.html"
        ),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(template_name="benchapp/password_done.html"),
        name="password_reset_complete",
    ),
    path("login/", RedirectView.as_view(pattern_name="login", query_string=True)),
    path(
        "logout/", RedirectView.as_view(pattern_name="logout", query_string=True, permanent=False)
    ),
    path("admin/", admin.site.urls),
    # The admin pages (endpoints, panels, seed import, users, workers); Django's admin above
    # stays for raw rows.
    path("manage/", include("benchapp.staff.urls")),
    path("api/", api.urls),
    # The evolution URLs with review's aggregates for the review-based campaign charts: composed
    # here, at the top, because the engine sits below review and never imports it.
    path("", include((evolution.urls.patterns(reviews=REVIEW_AGGREGATES), "evolution"))),
    path("", include("review.urls")),
    path("", include("releases.urls")),
    path("", include("reasoning.urls")),
    path("", include("frontiersmith.urls")),
    path("", include("evosyn.urls")),
    path("", include("xcoder.urls")),
]
