from django.urls import path

from evolution.views import campaign_control

from . import views

app_name = "evosyn"
urlpatterns = [
    path("evosyn/", views.campaign_list, name="campaign_list"),
    path("evosyn/new/", views.campaign_new, name="campaign_new"),
    path("evosyn/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("evosyn/<int:pk>/scores.json", views.campaign_scores, name="campaign_scores"),
    path("evosyn/<int:pk>/ablation.json", views.campaign_ablation, name="campaign_ablation"),
    path(
        "evosyn/<int:pk>/strategies/<int:version>.py",
        views.strategy_source,
        name="strategy_source",
    ),
    path("evosyn/<int:pk>/control/", views.control_build, name="control_build"),
    path(
        "evosyn/<int:pk>/control/<int:control_id>.jsonl",
        views.control_download,
        name="control_download",
    ),
    # Last, so the fixed paths above ("control/", "scores.json") win over the action slot.
    path(
        "evosyn/<int:pk>/<str:action>/",
        campaign_control,
        {"kind": "evosyn"},
        name="campaign_control",
    ),
]
